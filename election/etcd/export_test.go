package etcd

// ServerEndpoint returns the shared test server's client URL, for the
// external tests (package etcd_test) of this directory.
func ServerEndpoint() string { return server.Endpoint }
