package udp

// handoffTransport is a Transport that can hand each packet it receives to
// a function on the goroutine that read it, instead of queueing it on
// Packets (UDPTransport). The Elector then does a packet's whole work in
// the goroutine that read it, instead of handing it through a channel to
// Run's goroutine: one goroutine switch per packet instead of two.
type handoffTransport interface {
	// HandOff makes the transport call h for each packet it receives from
	// then on instead of queueing it; packets queued before stay on
	// Packets. Calls may come from several goroutines at once (one per
	// socket). p.Data is only valid during the call.
	HandOff(h func(p Packet))
}
