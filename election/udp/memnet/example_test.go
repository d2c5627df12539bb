package memnet_test

import (
	"fmt"
	"net/netip"

	"github.com/lanleader/lanleader/election/udp/memnet"
)

func Example() {
	n := memnet.New()
	a := n.Join(netip.MustParseAddrPort("198.18.0.1:7483"))
	b := n.Join(netip.MustParseAddrPort("198.18.0.2:7483"))
	defer a.Close()
	defer b.Close()

	_ = a.Broadcast([]byte("heartbeat"))
	p := <-b.Packets()
	fmt.Printf("%s from %s\n", p.Data, p.From)

	n.Partition([]netip.AddrPort{a.LocalAddr()}) // a alone
	_ = a.Broadcast([]byte("lost"))
	fmt.Println("blocked:", n.Stats().Blocked)
	// Output:
	// heartbeat from 198.18.0.1:7483
	// blocked: 1
}
