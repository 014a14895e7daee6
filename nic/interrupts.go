package nic

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Interrupts is the table /proc/interrupts shows: one count column per
// online CPU and one line per interrupt.
type Interrupts struct {
	CPUs  []int           // CPU id of each count column, from the header ("CPU0 CPU2 ...")
	Lines []InterruptLine // in file order
	// Layout is how the kernel spaced the text, for WriteTo.
	// ParseInterrupts fills it in; the zero value is the defaults.
	Layout InterruptsLayout
}

// InterruptsLayout is what WriteTo needs, beyond the values, to print the
// blanks of /proc/interrupts as the kernel that wrote it did.
// ParseInterrupts reads it from the text.
type InterruptsLayout struct {
	// Prec is the width of the IRQ column (the kernel's prec: 3 while
	// nr_irqs < 1000, one more per further decimal digit); the header is
	// indented by Prec+8 blanks. Zero: 3, or the widest IRQ number.
	Prec int
	// CountTrailer is true when the kernel printed each count of a
	// numbered line as "%10u " (a blank after it, as up to Linux 6.x),
	// false when it printed " %10u" (Linux 6.18 does): the two differ by
	// one blank before the chip name. Default: false.
	CountTrailer bool
	// ArchGap is the number of blanks between the last count and the
	// description of an architecture counter: 3 on x86 ("   Local timer
	// interrupts"), 7 on arm64 ("       Rescheduling interrupts").
	// Zero: 3.
	ArchGap int
}

// InterruptLine is one line of /proc/interrupts.
type InterruptLine struct {
	// IRQ is the first column without its colon: "38", or an architecture
	// counter such as "NMI", "LOC", "IPI0", "ERR".
	IRQ string
	// Number is IRQ as an integer, -1 for architecture counters.
	Number int
	// Counts holds one count per column of Interrupts.CPUs. It is shorter
	// for counters printed once (ERR, MIS).
	Counts []uint64
	// Chip is the interrupt controller ("IO-APIC", "PCI-MSIX-0000:00:03.0",
	// "IR-PCI-MSI", "ITS-MSI", "GICv3"); empty for architecture counters.
	// Kernels that print no hardware IRQ number glue the flow handler to
	// it ("IR-PCI-MSI-edge"): Chip is then "IR-PCI-MSI" and HWIRQ "-edge".
	Chip string
	// HWIRQ is the controller's number, trigger and flow handler as
	// printed: "2-edge", "524288 Edge", "27 Level", "-fasteoi"; may be
	// empty.
	HWIRQ string
	// Name is the rest of the line: the handlers' names joined by ", "
	// ("mlx5_comp3@pci:0000:01:00.0", "eth0-TxRx-3"), or an architecture
	// counter's description ("Local timer interrupts").
	Name string
}

// Total is the sum of the line's counts.
func (l InterruptLine) Total() uint64 {
	var t uint64
	for _, n := range l.Counts {
		t += n
	}
	return t
}

// Actions returns the handler names of a numbered line (a shared IRQ has
// several, printed "a, b").
func (l InterruptLine) Actions() []string {
	if l.Name == "" || l.Number < 0 {
		return nil
	}
	return strings.Split(l.Name, ", ")
}

// Line returns the line for IRQ number n.
func (t *Interrupts) Line(n int) (InterruptLine, bool) {
	for _, l := range t.Lines {
		if l.Number == n {
			return l, true
		}
	}
	return InterruptLine{}, false
}

// isHWIRQToken reports whether f is one of the controller-number and
// trigger tokens that follow the chip name: "2-edge", "524288", "27",
// "Edge", "Level", "0x1f", "-fasteoi".
func isHWIRQToken(f string) bool {
	switch f {
	case "Edge", "edge", "Level", "level", "-edge", "-level", "-fasteoi":
		return true
	}
	if len(f) > 2 && f[0] == '0' && f[1] == 'x' {
		for i := 2; i < len(f); i++ {
			if !isHex(f[i]) {
				return false
			}
		}
		return true
	}
	i := 0
	for i < len(f) && f[i] >= '0' && f[i] <= '9' {
		i++
	}
	if i == 0 {
		return false
	}
	if i == len(f) {
		return true
	}
	if f[i] != '-' || i+1 == len(f) {
		return false
	}
	for _, r := range f[i+1:] {
		if r < 'a' || r > 'z' {
			return false
		}
	}
	return true
}

func isHex(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'f' || b >= 'A' && b <= 'F'
}

// maxInterruptLine bounds one line of /proc/interrupts; a 4096-CPU host
// prints about 45 kB per line.
const maxInterruptLine = 1 << 20

// flowNames are the flow handler names the kernel prints after a dash
// ("-edge", "-fasteoi"): desc->name, set by irq_set_chip_and_handler_name.
var flowNames = map[string]bool{"edge": true, "level": true, "fasteoi": true, "simple": true, "percpu": true}

// splitGluedFlow splits "IR-PCI-MSI-edge" into "IR-PCI-MSI" and "-edge":
// kernels that print no hardware IRQ number print the flow handler right
// after the chip name.
func splitGluedFlow(chip string) (string, string, bool) {
	i := strings.LastIndexByte(chip, '-')
	if i <= 0 || !flowNames[chip[i+1:]] {
		return chip, "", false
	}
	return chip[:i], chip[i:], true
}

// span is one blank-separated field of a line, by byte offsets.
type span struct{ start, end int }

func fieldSpans(s string) []span {
	var out []span
	for i := 0; i < len(s); {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && s[j] != ' ' && s[j] != '\t' {
			j++
		}
		out = append(out, span{i, j})
		i = j
	}
	return out
}

// ParseInterrupts parses the text of /proc/interrupts (kernel/irq/proc.c
// show_interrupts and arch_show_interrupts): a header naming the online
// CPUs, then per line the IRQ, one count per CPU, and for numbered IRQs
// the chip, the hardware IRQ and trigger, and the handler names. It also
// records the text's Layout, so WriteTo can print it back. Errors match
// ErrSyntax and name the line.
func ParseInterrupts(r io.Reader) (*Interrupts, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxInterruptLine)
	t := &Interrupts{}
	lineNo := 0
	headerIndent := 0
	trailerKnown, gapKnown := false, false
	fail := func(line, why string) (*Interrupts, error) {
		if len(line) > 80 {
			line = line[:80] + "..."
		}
		return nil, fmt.Errorf("nic: /proc/interrupts line %d %q: %s: %w", lineNo, line, why, ErrSyntax)
	}
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if lineNo == 1 {
			headerIndent = len(line) - len(strings.TrimLeft(line, " "))
			for _, f := range strings.Fields(line) {
				id, err := strconv.Atoi(strings.TrimPrefix(f, "CPU"))
				if !strings.HasPrefix(f, "CPU") || err != nil || id < 0 || strings.HasPrefix(f, "CPU+") {
					return fail(line, "header: want CPU0 CPU1 ... (one CPUn per online CPU)")
				}
				if len(t.CPUs) > 0 && id <= t.CPUs[len(t.CPUs)-1] {
					return fail(line, "header: CPU ids must increase")
				}
				t.CPUs = append(t.CPUs, id)
			}
			if len(t.CPUs) == 0 {
				return fail(line, "header: want CPU0 CPU1 ... (one CPUn per online CPU)")
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		irq, rest, ok := strings.Cut(line, ":")
		label := irq
		irq = strings.TrimSpace(irq)
		if !ok || irq == "" || strings.ContainsAny(irq, " \t") {
			return fail(line, "want IRQ: followed by per-CPU counts")
		}
		l := InterruptLine{IRQ: irq, Number: -1}
		if n, err := strconv.Atoi(irq); err == nil {
			if n < 0 || irq != strconv.Itoa(n) {
				return fail(line, "want a non-negative decimal IRQ number")
			}
			l.Number = n
			// The kernel pads every number to prec: a shorter label
			// lost blanks on its way here (a mail, a paste).
			t.Layout.Prec = max(t.Layout.Prec, len(label))
		}
		spans := fieldSpans(rest)
		field := func(i int) string { return rest[spans[i].start:spans[i].end] }
		i := 0
		for ; i < len(spans) && i < len(t.CPUs); i++ {
			n, err := strconv.ParseUint(field(i), 10, 64)
			if err != nil {
				break
			}
			l.Counts = append(l.Counts, n)
		}
		if l.Number >= 0 && i < len(t.CPUs) {
			return fail(line, fmt.Sprintf("want %d per-CPU counts, one per header column, found %d", len(t.CPUs), i))
		}
		gap := -1 // blanks between the last count and what follows
		if i < len(spans) && i > 0 {
			gap = spans[i].start - spans[i-1].end
		}
		if l.Number < 0 && gap >= 0 && !gapKnown {
			t.Layout.ArchGap, gapKnown = gap, true
		}
		fields := make([]string, 0, len(spans)-i)
		for ; i < len(spans); i++ {
			fields = append(fields, field(i))
		}
		if l.Number >= 0 && len(fields) > 0 {
			l.Chip = fields[0]
			j := 1
			for j < len(fields) && isHWIRQToken(fields[j]) {
				j++
			}
			l.HWIRQ = strings.Join(fields[1:j], " ")
			if j == 1 {
				if chip, flow, ok := splitGluedFlow(l.Chip); ok {
					l.Chip, l.HWIRQ = chip, flow
				}
			}
			fields = fields[j:]
			if gap >= 0 && !trailerKnown {
				// The chip is printed " %8s" after the counts, which
				// end in a blank on kernels that print "%10u ".
				want := 1 + max(0, 8-len(l.Chip))
				if gap == want || gap == want+1 {
					t.Layout.CountTrailer, trailerKnown = gap == want+1, true
				}
			}
		}
		l.Name = strings.Join(fields, " ")
		t.Lines = append(t.Lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("nic: /proc/interrupts line %d: %w", lineNo+1, err)
	}
	if lineNo == 0 {
		return nil, fmt.Errorf("nic: /proc/interrupts: empty: want a CPU header line: %w", ErrSyntax)
	}
	if t.Layout.Prec == 0 {
		// No numbered line: the header's indent is prec+8.
		t.Layout.Prec = 3
		if headerIndent > 8 {
			t.Layout.Prec = headerIndent - 8
		}
	}
	return t, nil
}

// WriteTo writes t as the kernel prints /proc/interrupts: the header
// indented by Layout.Prec+8 blanks with one "CPU%-8d" per column; a
// numbered line as "%*d:" (Prec), the counts ("%10u " or " %10u", see
// Layout.CountTrailer), the chip " %8s", the hardware IRQ " %*lu" (Prec),
// the trigger " %-8s", the flow handler "-%-8s" and "  " before the
// handler names (kernel/irq/proc.c show_interrupts); an architecture
// counter as "%*s: " (arm64's "IPI%u:" as show_ipi_list prints it), its
// counts, and Layout.ArchGap blanks before its description (x86 and
// arm64 arch_show_interrupts).
//
// For a table ParseInterrupts read from a /proc/interrupts that Linux
// 2.6.3x to 6.18 printed on x86-64 or arm64, the output is that text byte
// for byte (tested on x86 captures of 2.6.38, 3.10 and 6.18, and of an
// arm64 kernel that prints hardware IRQ numbers),
// except for: blank lines, which are dropped; an interrupt without a
// hardware IRQ number on a kernel that prints a blank column in its place
// (4.x on), which comes out with the flow handler glued to the chip
// ("IO-APIC-edge      timer") as older kernels print it; a chip that
// prints itself (irq_print_chip) in another shape than " %8s"; the
// "%14s" chip types of 2.6.2x and before ("   IO-APIC-level  acpi"); and
// kernels that left-align the chip names in a column as wide as the
// longest (irq_proc_constraints.chip_width), which come out in the
// " %8s" form. ParseInterrupts reads the output of a table it returned
// back to an equal table.
func (t *Interrupts) WriteTo(w io.Writer) (int64, error) {
	prec := t.Layout.Prec
	if prec <= 0 {
		prec = 3
		for _, l := range t.Lines {
			if l.Number >= 0 && len(l.IRQ) > prec {
				prec = len(l.IRQ)
			}
		}
	}
	gap := t.Layout.ArchGap
	if gap <= 0 {
		gap = 3
	}
	var b bytes.Buffer
	b.WriteString(strings.Repeat(" ", prec+8))
	for _, c := range t.CPUs {
		b.WriteString(padRight("CPU"+strconv.Itoa(c), 11))
	}
	b.WriteString("\n")
	for _, l := range t.Lines {
		if l.Number >= 0 {
			writeNumbered(&b, l, prec, t.Layout.CountTrailer)
		} else {
			writeArch(&b, l, prec, gap)
		}
		b.WriteString("\n")
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// writeNumbered prints a line of show_interrupts.
func writeNumbered(b *bytes.Buffer, l InterruptLine, prec int, trailer bool) {
	b.WriteString(padLeft(l.IRQ, prec) + ":")
	for _, n := range l.Counts {
		b.WriteString(" " + padLeft(strconv.FormatUint(n, 10), 10))
	}
	if trailer {
		b.WriteByte(' ')
	}
	if l.Chip != "" {
		b.WriteString(" " + padLeft(l.Chip, 8))
	}
	if num, level, flow, ok := splitHWIRQ(l.HWIRQ); ok {
		if num != "" {
			b.WriteString(" " + padLeft(num, prec))
		}
		if level != "" {
			b.WriteString(" " + padRight(level, 8))
		}
		if flow != "" {
			b.WriteString("-" + padRight(flow, 8))
		}
	} else if l.HWIRQ != "" {
		b.WriteString(" " + l.HWIRQ)
	}
	if l.Name != "" {
		b.WriteString("  " + l.Name)
	}
}

// writeArch prints an architecture counter: x86's "%*s: " + "%10u " per
// CPU + "  " + text, or arm64's "%*s%u:%s" (IPIn) + "%10u " per CPU +
// "      " + text; Layout.ArchGap holds the blanks before the text.
func writeArch(b *bytes.Buffer, l InterruptLine, prec, gap int) {
	if n, ok := strings.CutPrefix(l.IRQ, "IPI"); ok && n != "" && strings.Trim(n, "0123456789") == "" {
		b.WriteString(padLeft("IPI", prec-1) + n + ":")
		if prec >= 4 && len(l.Counts) > 0 {
			b.WriteByte(' ')
		}
	} else {
		b.WriteString(padLeft(l.IRQ, prec) + ":")
		if len(l.Counts) > 0 {
			b.WriteByte(' ')
		}
	}
	for i, n := range l.Counts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(padLeft(strconv.FormatUint(n, 10), 10))
	}
	if l.Name != "" {
		if len(l.Counts) == 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strings.Repeat(" ", gap) + l.Name)
	}
}

// splitHWIRQ splits HWIRQ into the kernel's three fields: the hardware
// IRQ number ("524288"), the trigger ("Edge", "Level") and the flow
// handler ("edge" of "-edge"). ok is false for a shape the kernel does
// not print.
func splitHWIRQ(s string) (num, level, flow string, ok bool) {
	fs := strings.Fields(s)
	if len(fs) == 0 {
		return "", "", "", true
	}
	i := 0
	if c := fs[0][0]; c >= '0' && c <= '9' {
		num = fs[0]
		if d := strings.IndexByte(num, '-'); d > 0 && !strings.HasPrefix(num, "0x") {
			num, flow = fs[0][:d], fs[0][d+1:]
		}
		i++
	}
	if flow == "" && i < len(fs) {
		switch fs[i] {
		case "Edge", "Level", "edge", "level":
			level = fs[i]
			i++
		}
	}
	if flow == "" && i < len(fs) && len(fs[i]) > 1 && fs[i][0] == '-' {
		flow = fs[i][1:]
		i++
	}
	if i != len(fs) {
		return "", "", "", false
	}
	return num, level, flow, true
}

// padLeft right-aligns s in w bytes, as printf's %*s does in the kernel
// (bytes, not runes).
func padLeft(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}

// padRight left-aligns s in w bytes (%-*s).
func padRight(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return s + strings.Repeat(" ", w-len(s))
}
