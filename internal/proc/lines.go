package proc

import (
	"bufio"
	"errors"
	"io"
	"strings"
)

// MaxLineBytes is the longest line delivered in one piece; longer lines are
// delivered in pieces of this size, marked partial, so no output is lost and
// memory stays bounded.
const MaxLineBytes = 64 * 1024

// readLines delivers r's content line by line to onLine until EOF or a read
// error (a closed pipe).
func readLines(r io.Reader, stream Stream, onLine func(Stream, string, bool)) {
	_ = ReadLines(r, stream, onLine)
}

// ReadLines delivers r's content to onLine line by line, without the
// newline, as Run delivers a process's output: a line longer than
// MaxLineBytes in pieces marked partial, a last line without newline too.
// It returns at EOF (nil) or at the first read error (returned).
func ReadLines(r io.Reader, stream Stream, onLine func(Stream, string, bool)) error {
	br := bufio.NewReaderSize(r, MaxLineBytes)
	for {
		b, err := br.ReadSlice('\n')
		switch {
		case err == nil:
			emit(onLine, stream, strings.TrimSuffix(string(b[:len(b)-1]), "\r"), false)
		case errors.Is(err, bufio.ErrBufferFull):
			emit(onLine, stream, string(b), true)
		default:
			// EOF or closed pipe: a last line without newline still counts.
			if len(b) > 0 {
				emit(onLine, stream, string(b), false)
			}
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func emit(onLine func(Stream, string, bool), s Stream, line string, partial bool) {
	if onLine != nil {
		onLine(s, line, partial)
	}
}
