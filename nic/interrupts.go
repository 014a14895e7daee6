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
	Chip string
	// HWIRQ is the controller's number and trigger as printed: "2-edge",
	// "524288 Edge", "27 Level"; may be empty.
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

// ParseInterrupts parses the text of /proc/interrupts (kernel/irq/proc.c
// show_interrupts and arch_show_interrupts): a header naming the online
// CPUs, then per line the IRQ, one count per CPU, and for numbered IRQs
// the chip, the hardware IRQ and trigger, and the handler names. Errors
// match ErrSyntax and name the line.
func ParseInterrupts(r io.Reader) (*Interrupts, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxInterruptLine)
	t := &Interrupts{}
	lineNo := 0
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
		}
		fields := strings.Fields(rest)
		i := 0
		for ; i < len(fields) && i < len(t.CPUs); i++ {
			n, err := strconv.ParseUint(fields[i], 10, 64)
			if err != nil {
				break
			}
			l.Counts = append(l.Counts, n)
		}
		if l.Number >= 0 && i < len(t.CPUs) {
			return fail(line, fmt.Sprintf("want %d per-CPU counts, one per header column, found %d", len(t.CPUs), i))
		}
		fields = fields[i:]
		if l.Number >= 0 && len(fields) > 0 {
			l.Chip = fields[0]
			j := 1
			for j < len(fields) && isHWIRQToken(fields[j]) {
				j++
			}
			l.HWIRQ = strings.Join(fields[1:j], " ")
			fields = fields[j:]
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
	return t, nil
}

// WriteTo writes t in the layout of /proc/interrupts. ParseInterrupts reads
// it back to an equal table.
func (t *Interrupts) WriteTo(w io.Writer) (int64, error) {
	prec := 3
	for _, l := range t.Lines {
		if len(l.IRQ) > prec {
			prec = len(l.IRQ)
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%*s ", prec, "")
	for _, c := range t.CPUs {
		fmt.Fprintf(&b, "CPU%-8d", c)
	}
	b.WriteString("\n")
	for _, l := range t.Lines {
		fmt.Fprintf(&b, "%*s:", prec, l.IRQ)
		for _, n := range l.Counts {
			fmt.Fprintf(&b, " %10d", n)
		}
		for _, s := range []string{l.Chip, l.HWIRQ, l.Name} {
			if s != "" {
				b.WriteString("  " + s)
			}
		}
		b.WriteString("\n")
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}
