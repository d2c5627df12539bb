package udp

import "sync/atomic"

// counters are the live, atomically updated form of TransportStats.
type counters struct {
	packetsIn, bytesIn      atomic.Uint64
	packetsOut, bytesOut    atomic.Uint64
	readErrors, writeErrors atomic.Uint64
	droppedSelf             atomic.Uint64
	selfEchoes              atomic.Uint64
	droppedUnknownPeer      atomic.Uint64
	droppedQueueFull        atomic.Uint64
	probesIn                atomic.Uint64
}

func (c *counters) snapshot() TransportStats {
	return TransportStats{
		PacketsIn:          c.packetsIn.Load(),
		BytesIn:            c.bytesIn.Load(),
		PacketsOut:         c.packetsOut.Load(),
		BytesOut:           c.bytesOut.Load(),
		ReadErrors:         c.readErrors.Load(),
		WriteErrors:        c.writeErrors.Load(),
		DroppedSelf:        c.droppedSelf.Load(),
		SelfEchoes:         c.selfEchoes.Load(),
		DroppedUnknownPeer: c.droppedUnknownPeer.Load(),
		DroppedQueueFull:   c.droppedQueueFull.Load(),
		ProbesIn:           c.probesIn.Load(),
	}
}
