// Package topotest writes synthetic NCCL topology XML for tests and
// benchmarks: hosts of many PCIe GPUs, the shape that makes pair lists,
// matrices and the graph search grow, which no preset has.
package topotest

import (
	"fmt"
	"strings"
)

// Host describes a synthetic single-host PCIe system.
type Host struct {
	// Sockets is the number of CPUs (NUMA nodes), at least 1.
	Sockets int
	// Switches is the number of PCIe switches under each socket; 0 puts
	// every GPU on a root port of its socket.
	Switches int
	// GPUs is the number of GPUs under each switch, or under each socket
	// when Switches is 0.
	GPUs int
	// MixedWidths runs every other GPU of a switch at x8 instead of x16, so
	// that paths of the same hop count differ in bandwidth.
	MixedWidths bool
	// NVLinkAll joins every GPU to every other one by two NVLinks (an
	// NVLink all-to-all mesh, no NVSwitch): the deepest graph search.
	NVLinkAll bool
}

// N returns the host's GPU count.
func (h Host) N() int { return max(h.Sockets, 1) * max(h.Switches, 1) * h.GPUs }

// XML returns the host as NCCL_TOPO_DUMP_FILE would write it: Gen5 links,
// sm 89 GPUs without GPUDirect RDMA, ranks in GPU order, each PCIe device on
// a bus of its own (switch ports as devices 1.. of the switch's bus).
func (h Host) XML() string {
	var b strings.Builder
	b.WriteString(`<system version="1">`)
	g, bus := 0, 0
	var ids []string
	busID := func(bus, dev int) string { return fmt.Sprintf("%04x:%02x:%02x.0", bus>>8, bus&0xff, dev) }
	gpu := func(id string, k int) {
		width := 16
		if h.MixedWidths && k%2 == 1 {
			width = 8
		}
		if h.NVLinkAll {
			// the links are filled in below, once every bus id is known
			fmt.Fprintf(&b, `<pci busid="%s" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="%d"><gpu dev="%d" sm="89" rank="%d" gdr="0">@NV%d@</gpu></pci>`, id, width, g, g, g)
		} else {
			fmt.Fprintf(&b, `<pci busid="%s" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="%d"><gpu dev="%d" sm="89" rank="%d" gdr="0"/></pci>`, id, width, g, g)
		}
		ids = append(ids, id)
		g++
	}
	for c := range max(h.Sockets, 1) {
		fmt.Fprintf(&b, `<cpu numaid="%d" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`, c)
		if h.Switches == 0 {
			for k := range h.GPUs {
				bus++
				gpu(busID(bus, 0), k)
			}
		}
		for range h.Switches {
			bus++
			fmt.Fprintf(&b, `<pci busid="%s" class="0x060400" link_speed="32.0 GT/s PCIe" link_width="16">`, busID(bus, 0))
			for k := range h.GPUs {
				gpu(busID(bus, k+1), k)
			}
			b.WriteString(`</pci>`)
		}
		b.WriteString(`</cpu>`)
	}
	b.WriteString(`</system>`)
	if !h.NVLinkAll {
		return b.String()
	}
	x := b.String()
	for r := range ids {
		var nv strings.Builder
		for t, id := range ids {
			if t != r {
				fmt.Fprintf(&nv, `<nvlink target="%s" count="2" tclass="0x030200"/>`, id)
			}
		}
		x = strings.Replace(x, fmt.Sprintf("@NV%d@", r), nv.String(), 1)
	}
	return x
}

// OneGPU returns a valid one-GPU host (an sm 90 GPU with GPUDirect RDMA on
// a Gen5 root port) with body inserted inside its <cpu> after the GPU: the
// frame of the hostile-input tests, which put floods of elements, comments
// or text there.
func OneGPU(body string) string {
	return `<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">` +
		`<pci busid="0000:17:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1"/></pci>` +
		body + `</cpu></system>`
}

// NICs returns n 100 Gb/s NICs, each on a root port of its own in PCI
// domain 1 (so that their bus ids never meet a Host's), to be placed
// inside a <cpu> element.
func NICs(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `<pci busid="0001:%02x:%02x.0" class="0x020700" link_speed="16.0 GT/s PCIe" link_width="16"><nic><net name="mlx5_%d" dev="%d" speed="100000" port="1" gdr="0"/></nic></pci>`,
			i/32, i%32, i, i)
	}
	return b.String()
}

// WithNICs returns the host XML x with NICs(n) under its first CPU.
func WithNICs(x string, n int) string {
	return strings.Replace(x, "</cpu>", NICs(n)+"</cpu>", 1)
}

// CPUs returns a host of n CPUs (NUMA nodes, each its own <cpu>) with
// gpus sm 90 GPUs on root ports of the first: NCCL links every pair of
// CPUs, so this is the shape whose links grow with the square of n.
func CPUs(n, gpus int) string {
	var b strings.Builder
	b.WriteString(`<system version="1">`)
	for c := range n {
		fmt.Fprintf(&b, `<cpu numaid="%d" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">`, c)
		if c == 0 {
			for g := range gpus {
				fmt.Fprintf(&b, `<pci busid="0000:%02x:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="%d" sm="90" rank="%d" gdr="1"/></pci>`, 0x10+g, g, g)
			}
		}
		b.WriteString(`</cpu>`)
	}
	b.WriteString(`</system>`)
	return b.String()
}
