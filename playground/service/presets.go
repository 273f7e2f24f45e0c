package service

import (
	"strconv"

	"github.com/distributed-nav/distributed-nav/playground/controls"
	"github.com/distributed-nav/distributed-nav/playground/presets"
)

// PresetInfo is one built-in system, as `ncclsim presets --json` lists it:
// with the group the system pickers list it under, its display name there
// and the group's place (data/topologies/presets.tsv).
type PresetInfo struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Group       string `json:"group"`
	Title       string `json:"title"`
	GroupOrder  int    `json:"group_order"`
}

// Presets returns the built-in systems (parsed once per service).
func (s *Service) Presets() ([]PresetInfo, error) {
	list, err := s.presetList()
	if err != nil {
		return nil, err
	}
	out := make([]PresetInfo, 0, len(list))
	for _, p := range list {
		out = append(out, PresetInfo{Name: p.Name, Description: p.Description, Group: p.Group, Title: p.Title, GroupOrder: p.GroupOrder})
	}
	return out, nil
}

// presetList returns the parsed presets, cached.
func (s *Service) presetList() ([]presets.Preset, error) {
	if s.presets == nil {
		list, err := presets.List()
		if err != nil {
			return nil, err
		}
		s.presets = list
	}
	return s.presets, nil
}

// PresetXML returns the topology XML of a preset (for "download" and for
// editing a preset).
func (s *Service) PresetXML(name string) (string, error) {
	list, err := s.presetList()
	if err != nil {
		return "", err
	}
	for _, p := range list {
		if p.Name == name {
			return string(p.XML()), nil
		}
	}
	return "", fieldErr("preset", "unknown preset "+strconv.Quote(clipInput(name)))
}

// maxEchoed is how many bytes of an unknown name a message repeats.
const maxEchoed = 80

// clipInput cuts a name taken from the input to at most maxEchoed bytes
// for a message (which quotes it with Go's escapes, so that no control
// sequence of it reaches a terminal or the page): a link can carry a
// megabyte. The cut falls on a rune boundary, so that a name in another
// script is not shown with a broken last character as a \x escape.
func clipInput(s string) string {
	if len(s) <= maxEchoed {
		return s
	}
	return controls.Prefix(s, maxEchoed) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
