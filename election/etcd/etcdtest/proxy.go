package etcdtest

import (
	"fmt"
	"net/url"
	"time"

	"go.etcd.io/etcd/pkg/v3/proxy"
	"go.uber.org/zap"
)

// Proxy forwards TCP to a server and can cut the link: Cut drops
// everything both ways on open and new connections (they stay open, as in
// a network partition, rather than failing fast); Heal restores it.
type Proxy struct {
	// Endpoint is the URL clients dial instead of the server's.
	Endpoint string
	p        proxy.Server
}

// NewProxy starts a proxy to endpoint (http://host:port).
func NewProxy(endpoint string) (*Proxy, error) {
	to, err := url.Parse(endpoint)
	if err != nil {
		return nil, fmt.Errorf("etcdtest: proxy to %q: %w", endpoint, err)
	}
	from, err := freeURL("tcp")
	if err != nil {
		return nil, err
	}
	p := proxy.NewServer(proxy.ServerConfig{
		Logger:        zap.NewNop(),
		From:          *from,
		To:            url.URL{Scheme: "tcp", Host: to.Host},
		DialTimeout:   time.Second,
		RetryInterval: 10 * time.Millisecond,
	})
	select {
	case <-p.Ready():
	case err := <-p.Error():
		p.Close()
		return nil, fmt.Errorf("etcdtest: proxy: %w", err)
	}
	return &Proxy{Endpoint: "http://" + from.Host, p: p}, nil
}

// Cut drops all traffic both ways.
func (p *Proxy) Cut() {
	p.p.BlackholeTx()
	p.p.BlackholeRx()
}

// Heal forwards traffic again.
func (p *Proxy) Heal() {
	p.p.UnblackholeTx()
	p.p.UnblackholeRx()
}

// Close stops the proxy.
func (p *Proxy) Close() error { return p.p.Close() }

// DelayAnswers delays everything from the server to the client by d, so a
// keepalive's answer arrives d after etcd renewed the lease, and a request
// that gives up sooner than d was applied by etcd with its answer lost.
func (p *Proxy) DelayAnswers(d time.Duration) { p.p.DelayRx(d, 0) }

// AnswersOnTime ends DelayAnswers: answers sent from now on are forwarded
// at once (those already waiting arrive when their delay ends).
func (p *Proxy) AnswersOnTime() { p.p.UndelayRx() }
