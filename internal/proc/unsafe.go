package proc

import "unsafe"

// unsafePointer exists so the one unsafe conversion (a siginfo buffer for
// waitid) is in one place.
func unsafePointer(b *[128]byte) unsafe.Pointer { return unsafe.Pointer(b) }
