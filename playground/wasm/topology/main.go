//go:build js && wasm

// Command topology is the WebAssembly module of the topology page: package
// service's PageTopo question and the built-in systems, registered as
// globalThis.distnav by package jsapi. Each page has its own binary, which
// links only what its question reaches.
package main

import (
	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/wasm/jsapi"
)

func main() { jsapi.Serve(service.PageTopo, (*service.Service).AnswerTopo) }
