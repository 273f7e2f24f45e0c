// Package topo models an NCCL topology: the system graph NCCL builds from its
// topology XML (GPUs, PCI switches, CPUs, NVSwitches, NICs and network ports
// joined by typed, bandwidth-annotated links) and the best paths between them.
//
// The numbering of node, link and path types follows NCCL v2.30.7-1 so that
// "at most this level" comparisons behave as they do in the release:
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/graph/topo.h#L41-L65 and
// https://github.com/NVIDIA/nccl/blob/v2.30.7-1/src/include/graph.h#L116-L154
package topo

import (
	"fmt"
	"strings"
)

// NodeType is the kind of a topology node (topo.h:41-51).
type NodeType int

// Node types, numbered as in NCCL v2.30.7-1. Since v2.28 a physical GPU is a
// DEV node and the GPU node (one per rank) hangs off it through a LOC link;
// GIN, RMA and CXB nodes exist in NCCL but are never built by this model.
const (
	GPU NodeType = 0
	PCI NodeType = 1
	NVS NodeType = 2
	CPU NodeType = 3 // a NUMA domain
	NIC NodeType = 4
	NET NodeType = 5
	GIN NodeType = 6
	RMA NodeType = 7
	DEV NodeType = 8
	CXB NodeType = 9
)

// NumNodeTypes is NCCL_TOPO_NODE_TYPES.
const NumNodeTypes = 10

var nodeTypeNames = [...]string{"GPU", "PCI", "NVS", "CPU", "NIC", "NET", "GIN", "RMA", "DEV", "CXB"}

// String returns NCCL's name for the node type.
func (t NodeType) String() string {
	if t >= 0 && int(t) < len(nodeTypeNames) {
		return nodeTypeNames[t]
	}
	return fmt.Sprintf("NodeType(%d)", int(t))
}

// LinkType is the kind of a physical link (topo.h:55-65). Its values are
// chosen to coincide with the path type a one-hop path over it would have.
type LinkType int

// Link types, numbered as in NCCL v2.30.7-1.
const (
	LinkLOC LinkType = 0
	LinkNVL LinkType = 1
	LinkC2C LinkType = 3
	LinkPCI LinkType = 4
	LinkSYS LinkType = 9
	LinkNET LinkType = 10
)

var linkTypeNames = [...]string{"LOC", "NVL", "", "C2C", "PCI", "", "", "", "", "SYS", "NET"}

// String returns NCCL's name for the link type (topoLinkTypeStr, topo.cc:33).
func (t LinkType) String() string {
	if t >= 0 && int(t) < len(linkTypeNames) && linkTypeNames[t] != "" {
		return linkTypeNames[t]
	}
	return fmt.Sprintf("LinkType(%d)", int(t))
}

// PathType classifies the best path between two nodes; larger is worse
// (graph.h:116-154). Every "at most this level" rule compares these integers.
type PathType int

// Path types, numbered as in NCCL v2.30.7-1 (C2C and P2C were inserted after
// v2.21, which shifted every later value).
const (
	PathLOC PathType = 0  // same device
	PathNVL PathType = 1  // direct NVLink, also GPU-NVSwitch-GPU
	PathNVB PathType = 2  // NVLink through an intermediate GPU
	PathC2C PathType = 3  // chip-to-chip link (Grace-Hopper)
	PathPIX PathType = 4  // at most one PCIe bridge
	PathPXB PathType = 5  // several PCIe bridges, no host bridge
	PathP2C PathType = 6  // GPU to C2C to CPU to PCIe to NIC
	PathPXN PathType = 7  // GPU to NIC through an NVLink-connected peer GPU
	PathPHB PathType = 8  // through a PCIe host bridge (the CPU)
	PathSYS PathType = 9  // across the inter-socket interconnect
	PathNET PathType = 10 // through the network
	PathDIS PathType = 11 // disconnected
)

var pathTypeNames = [...]string{"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"}

// String returns NCCL's name for the path type (topo.cc:34).
func (t PathType) String() string {
	if t >= 0 && int(t) < len(pathTypeNames) {
		return pathTypeNames[t]
	}
	return fmt.Sprintf("PathType(%d)", int(t))
}

// ParsePathType accepts a path type name, case-insensitively, as NCCL's
// level variables (NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL) do. Legacy integer
// levels 0-5 map to LOC, PIX, PXB, PHB, SYS, SYS (levelsOldToNew, paths.cc:243).
func ParsePathType(s string) (PathType, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	for i, n := range pathTypeNames {
		if n == u {
			return PathType(i), nil
		}
	}
	legacy := map[string]PathType{"0": PathLOC, "1": PathPIX, "2": PathPXB, "3": PathPHB, "4": PathSYS, "5": PathSYS}
	if t, ok := legacy[u]; ok {
		return t, nil
	}
	return 0, fmt.Errorf("unknown path level %q (want one of LOC, NVL, NVB, C2C, PIX, PXB, P2C, PXN, PHB, SYS, or 0-5)", s)
}
