// The schedule: when each connection sends its next request, and the heap
// of connections waiting for their due time.

package loadgen

import (
	"time"
)

// dueBefore counts the requests the pacer schedules before end (ns).
func dueBefore(p Pacer, end int64) uint64 {
	if end <= 0 {
		return 0
	}
	k := p.Hits(time.Duration(end - 1))
	for k > 0 && int64(p.Due(k-1)) >= end {
		k--
	}
	for int64(p.Due(k)) < end {
		k++
	}
	return k
}

// schedule plans c's next request: now in a closed loop, at the pacer's
// time for it in an open one.
func (l *loop) schedule(c *conn, now int64) {
	r := l.r
	if r.stop.Load() || l.draining {
		l.retire(c)
		return
	}
	if r.pacer == nil {
		if now >= r.endNs || l.budget == 0 {
			l.retire(c)
			return
		}
		if l.budget > 0 {
			l.budget--
		}
		c.intended = now
	} else {
		n := c.gidx + c.k*r.nconns
		d := r.pacer.Due(n)
		if int64(d) >= r.endNs {
			l.retire(c)
			return
		}
		c.intended = int64(d)
	}
	c.recorded = c.intended >= r.warmupNs
	c.scheduled = true
	l.kick(c, now)
}

// kick moves c forward: it sends a due request on a ready connection,
// connects a closed one, or waits in the heap for the next due time.
func (l *loop) kick(c *conn, now int64) {
	if !c.scheduled || c.state == csDone {
		return
	}
	if l.draining {
		// The window is over: a request not yet sent is not sent.
		l.retire(c)
		return
	}
	if c.intended > now {
		l.wakeAt(c, c.intended)
		return
	}
	switch c.state {
	case csClosed:
		if c.retryAt > now {
			l.wakeAt(c, c.retryAt)
			return
		}
		if l.r.pacer == nil {
			// A closed loop has no schedule: the request starts now.
			c.intended = now
			c.recorded = now >= l.r.warmupNs
		}
		l.connect(c, now)
	case csIdle:
		l.send(c, now)
	}
	// csConnecting: sent when the connect completes.
}

func (l *loop) wakeAt(c *conn, t int64) {
	if c.hidx >= 0 {
		l.heap.remove(c)
	}
	c.due = t
	l.heap.push(c)
}

// retire marks c as sending no more requests; it closes the socket.
func (l *loop) retire(c *conn) {
	if c.state == csDone {
		return
	}
	if c.hidx >= 0 {
		l.heap.remove(c)
	}
	l.closeConn(c)
	c.state = csDone
	c.scheduled = false
	l.active--
}

// connHeap is a min-heap of connections by due time.
type connHeap []*conn

func (h *connHeap) push(c *conn) {
	c.hidx = len(*h)
	*h = append(*h, c)
	h.up(c.hidx)
}

func (h *connHeap) pop() *conn {
	old := *h
	c := old[0]
	n := len(old) - 1
	old[0] = old[n]
	old[0].hidx = 0
	old[n] = nil
	*h = old[:n]
	if n > 0 {
		h.down(0)
	}
	c.hidx = -1
	return c
}

func (h *connHeap) remove(c *conn) {
	i := c.hidx
	old := *h
	n := len(old) - 1
	if i != n {
		old[i] = old[n]
		old[i].hidx = i
	}
	old[n] = nil
	*h = old[:n]
	if i < n {
		h.down(i)
		h.up(i)
	}
	c.hidx = -1
}

func (h connHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if h[p].due <= h[i].due {
			break
		}
		h[p], h[i] = h[i], h[p]
		h[p].hidx, h[i].hidx = p, i
		i = p
	}
}

func (h connHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].due < h[l].due {
			m = r
		}
		if h[i].due <= h[m].due {
			return
		}
		h[i], h[m] = h[m], h[i]
		h[i].hidx, h[m].hidx = i, m
		i = m
	}
}
