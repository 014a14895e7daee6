package nic

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/nettune/nettune/internal/cpuset"
	"github.com/nettune/nettune/internal/hostfs"
)

// QueueKind says what a device interrupt serves.
type QueueKind int

// Queue kinds.
const (
	// QueueOther is an interrupt that serves no queue: configuration,
	// asynchronous events, management ("virtio2-config", "mlx5_async0").
	QueueOther QueueKind = iota
	// QueueCombined serves one RX and one TX queue ("eth0-TxRx-3",
	// "mlx5_comp3@pci:0000:01:00.0").
	QueueCombined
	// QueueRX serves an RX queue ("eth0-rx-1", "virtio2-input.0").
	QueueRX
	// QueueTX serves a TX queue ("eth0-tx-1", "virtio2-output.0").
	QueueTX
)

// String returns "combined", "rx", "tx" or "other".
func (k QueueKind) String() string {
	switch k {
	case QueueCombined:
		return "combined"
	case QueueRX:
		return "rx"
	case QueueTX:
		return "tx"
	}
	return "other"
}

// queueName matches the queue part of the handler names drivers give their
// MSI-X vectors, at the end of the name once an "@pci:..." suffix is cut:
// mlx5 "mlx5_comp3", Intel "eth0-TxRx-3", "i40e-eth0-TxRx-3", "eth0-rx-1",
// ena "eth0-Tx-Rx-0", virtio "virtio2-input.0", hns3 "...-TxRx-0", mana
// "mana_q3", gve "gve-ntfy-blk3".
var queueName = regexp.MustCompile(`(?i)(?:^|[-_.])(txrx|tx-rx|rxtx|rx-tx|comp|combined|fp|queue|q|blk|input|output|rx|tx)[-_.]?([0-9]+)$`)

// ClassifyIRQName says which queue an interrupt handler name serves, from
// the naming conventions of common drivers; ifname also recognises the
// "IF-N" form (sfc). It returns QueueOther and -1 for names that serve no
// queue or that it does not recognise.
func ClassifyIRQName(name, ifname string) (QueueKind, int) {
	if i := strings.IndexByte(name, '@'); i >= 0 {
		name = name[:i]
	}
	if m := queueName.FindStringSubmatch(name); m != nil {
		q, err := strconv.Atoi(m[2])
		if err == nil {
			switch strings.ToLower(m[1]) {
			case "input", "rx":
				return QueueRX, q
			case "output", "tx":
				return QueueTX, q
			default:
				return QueueCombined, q
			}
		}
	}
	if ifname != "" && strings.HasPrefix(name, ifname+"-") {
		if q, err := strconv.Atoi(name[len(ifname)+1:]); err == nil && q >= 0 {
			return QueueCombined, q
		}
	}
	return QueueOther, -1
}

// CPUCount is one CPU's count of an interrupt.
type CPUCount struct {
	CPU   int
	Count uint64
}

// QueueIRQ is one interrupt of a NIC's device and the queue it serves.
type QueueIRQ struct {
	IRQ   int
	Name  string    // handler name(s) from /proc/interrupts
	Kind  QueueKind // what it serves
	Queue int       // queue (channel) index; -1 for QueueOther
	// Counts are the interrupt's per-CPU counts, one per online CPU.
	Counts []CPUCount
	// Affinity is /proc/irq/N/smp_affinity_list: the CPUs allowed to
	// receive it.
	Affinity []int
	// Effective is /proc/irq/N/effective_affinity_list, the CPUs that do
	// receive it; nil where the kernel does not report it.
	Effective []int
}

// Total is the sum of the per-CPU counts.
func (q QueueIRQ) Total() uint64 {
	var t uint64
	for _, c := range q.Counts {
		t += c.Count
	}
	return t
}

// Interrupts reads and parses /proc/interrupts under the root.
func (c *Client) Interrupts() (*Interrupts, error) {
	p := c.root.Proc("interrupts")
	b, err := hostfs.ReadFile(p)
	if err != nil {
		return nil, opError("read interrupts", "", "", err)
	}
	t, err := ParseInterrupts(strings.NewReader(string(b)))
	if err != nil {
		return nil, opError("read interrupts", "", "", fmt.Errorf("%s: %w", p, err))
	}
	return t, nil
}

// QueueIRQs returns the interrupts of ifname's device: the IRQ numbers in
// /sys/class/net/IF/device/msi_irqs (or the nearest parent's, for virtio),
// named and counted from /proc/interrupts, with their affinity from
// /proc/irq/N/smp_affinity_list and effective_affinity_list. They are
// ordered queues first (by queue index, combined, rx, tx), then the others.
// It needs no privilege. The error matches ErrNoInterface when sysfs has
// no such interface and ErrNotSupported when it has no MSI interrupts
// (virtual interfaces, legacy INTx devices).
func (c *Client) QueueIRQs(ifname string) ([]QueueIRQ, error) {
	irqs, _, err := c.msiIRQs(ifname)
	if err != nil {
		return nil, opError("read queue irqs", ifname, "", err)
	}
	table, err := c.Interrupts()
	if err != nil {
		return nil, err
	}
	var out []QueueIRQ
	for _, n := range irqs {
		q := QueueIRQ{IRQ: n, Queue: -1}
		if l, ok := table.Line(n); ok {
			q.Name = l.Name
			q.Kind, q.Queue = ClassifyIRQName(l.Name, ifname)
			for i, v := range l.Counts {
				q.Counts = append(q.Counts, CPUCount{CPU: table.CPUs[i], Count: v})
			}
		}
		aff, err := c.IRQAffinity(n)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		q.Affinity = aff
		if s, err := c.readCPUList(c.root.Proc("irq", strconv.Itoa(n), "effective_affinity_list")); err == nil {
			q.Effective = s.IDs()
		}
		out = append(out, q)
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := out[a], out[b]
		if (x.Kind == QueueOther) != (y.Kind == QueueOther) {
			return y.Kind == QueueOther
		}
		if x.Queue != y.Queue {
			return x.Queue < y.Queue
		}
		if x.Kind != y.Kind {
			return x.Kind < y.Kind
		}
		return x.IRQ < y.IRQ
	})
	return out, nil
}

func (c *Client) readCPUList(p string) (cpuset.Set, error) {
	s, err := hostfs.ReadString(p)
	if err != nil {
		return cpuset.Set{}, err
	}
	return cpuset.ParseNamed(s, p)
}

// IRQAffinity reads /proc/irq/N/smp_affinity_list: the CPUs allowed to
// receive IRQ irq. It needs no privilege. The error matches os.ErrNotExist
// when there is no such IRQ.
func (c *Client) IRQAffinity(irq int) ([]int, error) {
	p := c.root.Proc("irq", strconv.Itoa(irq), "smp_affinity_list")
	s, err := c.readCPUList(p)
	if err != nil {
		return nil, opError("read irq affinity", "", "irq "+strconv.Itoa(irq), err)
	}
	return s.IDs(), nil
}

// IRQAffinity is the CPU affinity of one IRQ, as read or to be written.
type IRQAffinity struct {
	IRQ  int
	CPUs []int
}

// String reads "irq 61 cpus 0-3".
func (a IRQAffinity) String() string {
	return fmt.Sprintf("irq %d cpus %s", a.IRQ, CPUList(a.CPUs))
}

// cpuSet is cpus as a set; an id outside 0..cpuset.MaxID is an error.
func cpuSet(cpus []int) (cpuset.Set, error) {
	for _, id := range cpus {
		if id < 0 || id > cpuset.MaxID {
			return cpuset.Set{}, fmt.Errorf("cpu %d: want 0-%d", id, cpuset.MaxID)
		}
	}
	return cpuset.Of(cpus...), nil
}

// SetIRQAffinity writes cpus to /proc/irq/N/smp_affinity_list in place and
// returns the affinity it had. It needs root. Errors match ErrPermission,
// os.ErrNotExist (no such IRQ), ErrNotSupported (EIO: the kernel manages
// this IRQ's affinity itself) and syscall.EINVAL (no online CPU in cpus).
func (c *Client) SetIRQAffinity(irq int, cpus []int) ([]int, error) {
	req := IRQAffinity{IRQ: irq, CPUs: cpus}
	set, err := cpuSet(cpus)
	if err != nil || set.IsEmpty() {
		if err == nil {
			err = errors.New("empty cpu list: want at least one CPU")
		}
		return nil, opError("set irq affinity", "", req.String(), err)
	}
	prev, err := c.IRQAffinity(irq)
	if err != nil {
		return nil, err
	}
	p := c.root.Proc("irq", strconv.Itoa(irq), "smp_affinity_list")
	if err := c.root.WriteAttr(p, set.String()); err != nil {
		if errors.Is(err, syscall.EIO) {
			err = fmt.Errorf("%w (a managed or per-CPU interrupt): %w", ErrNotSupported, err)
		}
		return prev, opError("set irq affinity", "", req.String(), err)
	}
	return prev, nil
}

// PlanSpread assigns irqs one per CPU over cpus, in order, wrapping around
// when there are more IRQs than CPUs — what vendors' set_irq_affinity
// scripts do. It is pure: SpreadIRQs applies it.
func PlanSpread(irqs []int, cpus []int) ([]IRQAffinity, error) {
	if len(cpus) == 0 {
		return nil, errors.New("nic: spread irqs: empty cpu list: want at least one CPU")
	}
	if _, err := cpuSet(cpus); err != nil {
		return nil, fmt.Errorf("nic: spread irqs: %w", err)
	}
	plan := make([]IRQAffinity, len(irqs))
	for i, irq := range irqs {
		plan[i] = IRQAffinity{IRQ: irq, CPUs: []int{cpus[i%len(cpus)]}}
	}
	return plan, nil
}

// ApplyIRQAffinity writes each affinity in plan in order (SetIRQAffinity)
// and returns the affinities the IRQs had. When a write fails, those
// already written are put back before the error is returned, so the host
// is as it was. Pass the returned slice to ApplyIRQAffinity to restore.
func (c *Client) ApplyIRQAffinity(plan []IRQAffinity) ([]IRQAffinity, error) {
	prev := make([]IRQAffinity, 0, len(plan))
	for _, a := range plan {
		old, err := c.SetIRQAffinity(a.IRQ, a.CPUs)
		if err != nil {
			for i := len(prev) - 1; i >= 0; i-- {
				if _, uerr := c.SetIRQAffinity(prev[i].IRQ, prev[i].CPUs); uerr != nil {
					err = errors.Join(err, fmt.Errorf("undo: %w", uerr))
				}
			}
			return nil, err
		}
		prev = append(prev, IRQAffinity{IRQ: a.IRQ, CPUs: old})
	}
	return prev, nil
}

// PlanQueueSpread reads ifname's queue interrupts (QueueIRQs; configuration
// IRQs are left out) and gives each queue one CPU of cpus, in queue order,
// wrapping around when there are more queues than CPUs. The IRQs of one
// queue share its CPU: virtio's input.N and output.N, or a split NIC's
// rx-N and tx-N, as the kernel's virtio_net and Intel's set_irq_affinity
// place them. It changes nothing: the dry run of SpreadQueueIRQs.
func (c *Client) PlanQueueSpread(ifname string, cpus []int) ([]IRQAffinity, error) {
	if len(cpus) == 0 {
		return nil, opError("spread queue irqs", ifname, "", errors.New("empty cpu list: want at least one CPU"))
	}
	if _, err := cpuSet(cpus); err != nil {
		return nil, opError("spread queue irqs", ifname, "", err)
	}
	qs, err := c.QueueIRQs(ifname)
	if err != nil {
		return nil, err
	}
	var plan []IRQAffinity
	rank := map[int]int{} // queue index -> its rank among the queues
	for _, q := range qs {
		if q.Kind == QueueOther {
			continue
		}
		r, ok := rank[q.Queue]
		if !ok {
			r = len(rank)
			rank[q.Queue] = r
		}
		plan = append(plan, IRQAffinity{IRQ: q.IRQ, CPUs: []int{cpus[r%len(cpus)]}})
	}
	if len(plan) == 0 {
		return nil, opError("spread queue irqs", ifname, "", fmt.Errorf("no queue interrupts among the device's IRQs: %w", ErrNotSupported))
	}
	return plan, nil
}

// SpreadQueueIRQs applies PlanQueueSpread: it spreads the queue interrupts
// of ifname one per CPU over cpus and returns the previous affinities, for
// ApplyIRQAffinity to restore. It needs root; a failed write undoes the
// ones made.
func (c *Client) SpreadQueueIRQs(ifname string, cpus []int) ([]IRQAffinity, error) {
	plan, err := c.PlanQueueSpread(ifname, cpus)
	if err != nil {
		return nil, err
	}
	return c.ApplyIRQAffinity(plan)
}

// CPUList formats CPU ids in the kernel's list form, "0-7,96-103", as
// smp_affinity_list shows them: sorted, duplicates once. Ids that no CPU
// list can hold (negative ones) are printed as a Go slice, "[-1 2]".
func CPUList(cpus []int) string {
	s, err := cpuSet(cpus)
	if err != nil {
		return fmt.Sprint(cpus)
	}
	return s.String()
}

// ParseCPUList parses the kernel's CPU list form ("0-7,96-103", "3", the
// stride form "0-15:2/4") into sorted CPU ids, as CPUList writes them and
// Client methods take them. Errors match ErrSyntax.
func ParseCPUList(s string) ([]int, error) {
	set, err := cpuset.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("nic: %w: %w", ErrSyntax, err)
	}
	return set.IDs(), nil
}
