package etcdtest

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
	"golang.org/x/crypto/bcrypt"
)

// Server is a single-member etcd cluster running in this process.
type Server struct {
	// Endpoint is the client URL, http://127.0.0.1:port.
	Endpoint string
	etcd     *embed.Etcd
}

// Start starts a server keeping its data in dir (a temporary directory) and
// waits until it serves. Its logs are discarded.
func Start(dir string) (*Server, error) {
	clientURL, err := freeURL("http")
	if err != nil {
		return nil, err
	}
	peerURL, err := freeURL("http")
	if err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = dir
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*clientURL}, []url.URL{*clientURL}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peerURL}, []url.URL{*peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	// Short raft ticks start the one-member cluster fast; they also lower
	// etcd's minimum lease TTL (1.5 election timeouts) well below the 2 s
	// the tests use.
	cfg.TickMs, cfg.ElectionMs = 20, 200
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.EnableGRPCGateway = false
	// With authentication enabled, the client authenticates again for
	// every new stream (watch, lease keepalive), and each check costs a
	// bcrypt comparison: at etcd's default cost, under the race detector,
	// long enough to lose a 2 s lease. The cheapest cost keeps it quick.
	cfg.BcryptCost = uint(bcrypt.MinCost)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("etcdtest: start: %w", err)
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcdtest: start: %w", err)
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcdtest: server not ready after 30s")
	}
	return &Server{Endpoint: clientURL.String(), etcd: e}, nil
}

// Close stops the server.
func (s *Server) Close() { s.etcd.Close() }

// NewClient returns a client of endpoint (the server's, or a proxy's) that
// logs nothing. The caller closes it.
func NewClient(endpoint string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{
		Endpoints:   []string{endpoint},
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
}

// freeURL returns a URL on a 127.0.0.1 port that was free a moment ago.
func freeURL(scheme string) (*url.URL, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("etcdtest: free port: %w", err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return &url.URL{Scheme: scheme, Host: addr}, nil
}

// EnableAuth turns on etcd's authentication (as `etcdctl auth enable`
// does) through client, which must not authenticate: it creates the user
// root with rootPassword and the role root, which etcd gives every
// permission. From then on every request needs a user's credentials.
func EnableAuth(client *clientv3.Client, rootPassword string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := client.UserAdd(ctx, "root", rootPassword); err != nil {
		return fmt.Errorf("etcdtest: add user root: %w", err)
	}
	if _, err := client.RoleAdd(ctx, "root"); err != nil {
		return fmt.Errorf("etcdtest: add role root: %w", err)
	}
	if _, err := client.UserGrantRole(ctx, "root", "root"); err != nil {
		return fmt.Errorf("etcdtest: grant role root: %w", err)
	}
	if _, err := client.AuthEnable(ctx); err != nil {
		return fmt.Errorf("etcdtest: enable auth: %w", err)
	}
	return nil
}

// RefuseWrites makes etcd refuse every write, as it does when its database
// is full (the NOSPACE alarm, `etcdctl alarm list`), until AcceptWrites:
// reads and lease keepalives still work.
func (s *Server) RefuseWrites() error { return s.alarm(pb.AlarmRequest_ACTIVATE) }

// AcceptWrites ends RefuseWrites (`etcdctl alarm disarm`).
func (s *Server) AcceptWrites() error { return s.alarm(pb.AlarmRequest_DEACTIVATE) }

func (s *Server) alarm(action pb.AlarmRequest_AlarmAction) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := s.etcd.Server.Alarm(ctx, &pb.AlarmRequest{Action: action,
		MemberID: uint64(s.etcd.Server.MemberID()), Alarm: pb.AlarmType_NOSPACE})
	if err != nil {
		return fmt.Errorf("etcdtest: NOSPACE alarm %s: %w", action, err)
	}
	return nil
}
