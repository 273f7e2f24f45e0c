//go:build js && wasm

// Command model is the WebAssembly module of the playground's model pages
// (topology, algorithms, estimator, step): package service's model
// questions registered as globalThis.distnav by package jsapi.
package main

import (
	"syscall/js"

	"github.com/distributed-nav/distributed-nav/playground/service"
	"github.com/distributed-nav/distributed-nav/playground/wasm/jsapi"
)

func main() {
	jsapi.RegisterModel(js.Global(), service.New())
	select {}
}
