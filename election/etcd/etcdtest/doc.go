// Package etcdtest runs a real etcd server inside the test process
// (go.etcd.io/etcd/server/v3/embed) on free 127.0.0.1 ports, with a fault
// proxy to cut one client off from it. The etcd mode's tests use it; a
// program embedding the mode can too.
package etcdtest
