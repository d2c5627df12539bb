package proc

import (
	"runtime"
	"sync"
)

// The kernel sends a child its parent-death signal (PR_SET_PDEATHSIG) when
// the *thread* that forked it exits, not the process (go.dev/issue/27505).
// Go may end a thread whose goroutine locked it and returned, so a child
// forked from an ordinary goroutine could get the signal while lanleader is
// alive. Every child is therefore forked from forkLoop, a goroutine locked
// to its thread that never returns: that thread ends only with the process.

// forkReq is one function to run on the fork thread. done is a mutex, not
// a channel, so a caller inside a testing/synctest bubble can wait for a
// goroutine outside it.
type forkReq struct {
	f    func()
	done sync.Mutex
}

// forkReqs is created at package initialization, outside any bubble.
var forkReqs = make(chan *forkReq)

func startForkThread() { go forkLoop() }

func forkLoop() {
	runtime.LockOSThread() // never unlocked: the thread lives as long as the process
	for r := range forkReqs {
		r.f()
		r.done.Unlock()
	}
}

// onForkThread runs f on the fork thread and returns when it has.
func onForkThread(f func()) {
	r := &forkReq{f: f}
	r.done.Lock()
	forkReqs <- r
	r.done.Lock()
}
