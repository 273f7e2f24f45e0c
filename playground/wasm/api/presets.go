package api

// PresetsJSON returns the built-in systems as `ncclsim presets --json`
// prints them: [{"name": ..., "description": ...}, ...].
func (s *Session) PresetsJSON() string {
	list, err := s.Presets()
	if err != nil {
		return errorJSON(err)
	}
	var w jw
	w.arr()
	for _, p := range list {
		w.obj()
		w.kstr("name", p.Name)
		w.kstr("description", p.Description)
		w.end()
	}
	w.endArr()
	return w.String()
}

// PresetXML returns the topology XML of a preset (for "download" and for
// editing a preset), or the error object.
func (s *Session) PresetXML(name string) (string, error) {
	list, err := s.Presets()
	if err != nil {
		return "", err
	}
	for _, p := range list {
		if p.Name == name {
			return string(p.XML()), nil
		}
	}
	return "", fieldErr("preset", "unknown preset \""+name+"\"")
}
