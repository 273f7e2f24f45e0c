package main

// This file bounds how much of a log `ncclsim doctor` reads (issue 18: the
// work follows from what a reader can use, not from the bytes given). The
// doctor's time grows with the log, about 5 MB/s here, so a 52 MB log took
// 10 s; NCCL logs carry their failure at the end and their versions,
// topology and transports at the start, so a log over the cap is read as
// its first half-cap and its last half-cap, each cut at a line end.

import (
	"bytes"
	"fmt"
	"io"
)

// defaultLogMiB is --max-log-mb's default: the doctor page's limit
// (service.MaxLogBytes), so the terminal and the page read the same bytes
// of a log up to it.
const defaultLogMiB = 8

// logCut says what capLog left out of a log.
type logCut struct {
	Total   int64 // bytes of the whole log
	Skipped int64 // bytes between the head and the tail that were not read
}

// capLog reads r to its end and returns the text the doctor reads: all of
// it when it holds at most limit bytes (limit <= 0: no limit), else its
// first limit/2 bytes up to the last line end within them and its last
// limit/2 bytes from the first line end within them. About twice limit
// bytes are held (the first limit+1 read, and the tail's window of up to
// limit+1), whatever the size of r.
func capLog(r io.Reader, limit int64) ([]byte, *logCut, error) {
	if limit <= 0 {
		b, err := io.ReadAll(r)
		return b, nil, err
	}
	first, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(first)) <= limit {
		return first, nil, nil
	}
	half := limit / 2
	head := first[:half]
	if i := bytes.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	// The tail: a window of the last half bytes, kept in a buffer of
	// twice that size so that it is copied down once per half read.
	tail := append(make([]byte, 0, 2*half+1), first[half:]...)
	total := int64(len(first))
	buf := make([]byte, 64<<10)
	for {
		n, err := r.Read(buf)
		total += int64(n)
		tail = append(tail, buf[:n]...)
		if int64(len(tail)) > 2*half {
			tail = append(tail[:0], tail[int64(len(tail))-half-1:]...)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, err
		}
	}
	// The byte before the last half says whether it starts a line: then
	// it is kept whole, else from its first line end.
	tail = tail[int64(len(tail))-half-1:]
	if i := bytes.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	out := append(head, tail...)
	return out, &logCut{Total: total, Skipped: total - int64(len(out))}, nil
}

// String says what was read, for stderr.
func (c *logCut) String() string {
	return fmt.Sprintf("the log is %d bytes, over --max-log-mb; its first and last lines (%d bytes) were read and the %d bytes between were skipped (--max-log-mb 0 reads all of it)",
		c.Total, c.Total-c.Skipped, c.Skipped)
}
