package model

import (
	"context"
	"strings"
	"testing"

	"github.com/distributed-nav/distributed-nav/playground/ncclenv"
	"github.com/distributed-nav/distributed-nav/playground/topo"
	"github.com/distributed-nav/distributed-nav/playground/topo/topotest"
)

func BenchmarkZZNIC252(b *testing.B) {
	x := topotest.WithNICs(topotest.Host{Sockets: 2, Switches: 4, GPUs: 9}.XML(), 252)
	for b.Loop() {
		sys, _, err := topo.ParseXML(strings.NewReader(x))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Build(context.Background(), sys, 1, ncclenv.Env{}); err != nil {
			b.Fatal(err)
		}
	}
}
