// Package data holds the project's hand-maintained fact files and exposes the
// ones Go code needs at run time as embedded file systems.
package data

import "embed"

// Topologies holds the preset systems of the NCCL model as NCCL-format
// topology XML files (topologies/NAME.xml), each starting with a
// "<!-- description: ... -->" comment, and topologies/presets.tsv, the group
// and display name of each. The presets registry (playground/presets) lists
// and parses them.
//
//go:embed topologies/*.xml topologies/presets.tsv
var Topologies embed.FS

// PresetTable is topologies/presets.tsv alone (name, group and title of
// each preset), for code that names presets without parsing their
// topologies: the log doctor suggests one for an nccl-tests run without
// carrying the XML files into its WebAssembly binary.
//
//go:embed topologies/presets.tsv
var PresetTable string
