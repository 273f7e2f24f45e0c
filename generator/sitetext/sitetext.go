// Package sitetext reads content/site.yaml: the prose of the pages the generator assembles
// itself (the card's overview and index pages, the notes index, the playground, the
// environment-variable, corrections, sources and A–Z pages, the handbook's chapter names).
// Writers change those words there, not in Go.
//
// A text may hold placeholders in braces ({count}, {title}) that the generator fills in;
// each field declares the ones it accepts (struct tag vars). Load fails with
// "content/site.yaml:LINE: what is wrong" on an unknown field, a missing text or a
// placeholder the field does not accept.
package sitetext

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
)

// Path is where the texts live, relative to the repository root.
const Path = "content/site.yaml"

// Text is one piece of prose, possibly with placeholders.
type Text string

// Fill replaces each {name} by its value; pairs are name, value, name, value, ...
func (t Text) Fill(pairs ...string) string {
	var args []string
	for i := 0; i+1 < len(pairs); i += 2 {
		args = append(args, "{"+pairs[i]+"}", pairs[i+1])
	}
	return strings.NewReplacer(args...).Replace(string(t))
}

// Page is the title, description and opening prose of a generated page.
type Page struct {
	Title       Text `yaml:"title"`
	Description Text `yaml:"description"`
	Intro       Text `yaml:"intro" optional:"true"`
}

// Widget is one playground page.
type Widget struct {
	Slug        string `yaml:"slug"`
	Title       Text   `yaml:"title"`
	Description Text   `yaml:"description"`
}

// Layer names the handbook chapter of the notes of one layer.
type Layer struct {
	Layer string `yaml:"layer"`
	Title Text   `yaml:"title"`
}

// Texts is the whole file.
type Texts struct {
	// StartHere names the home page in the navigation.
	StartHere Text `yaml:"start_here"`
	Card      struct {
		// Overview opens a card's first page, after its description.
		Overview           Text `yaml:"overview" vars:"name"`
		SectionDescription Text `yaml:"section_description" vars:"title"`
		SubsystemsIndex    Text `yaml:"subsystems_description" vars:"count"`
		SubsystemsItem     Text `yaml:"subsystems_item" vars:"count"`
		FlowsIndex         Text `yaml:"flows_description"`
		FlowsItem          Text `yaml:"flows_item" vars:"count"`
		FlowDescription    Text `yaml:"flow_description" vars:"title"`
		FlowSteps          Text `yaml:"flow_steps" vars:"count"`
		FlowIntro          Text `yaml:"flow_intro"`
		SubsystemDeepDive  Text `yaml:"subsystem_deep_dive" vars:"section,note"`
		SectionDeepDive    Text `yaml:"section_deep_dive" vars:"links"`
	} `yaml:"card"`
	Notes      Page `yaml:"notes"`
	Playground struct {
		Title       Text `yaml:"title"`
		Description Text `yaml:"description"`
		// Intro opens the playground's index page; {system} is the default
		// preset's description.
		Intro   Text     `yaml:"intro" vars:"system"`
		Widgets []Widget `yaml:"widgets"`
	} `yaml:"playground"`
	Env         Page `yaml:"env" vars:"nccl_tag,nccl_rows,torch_tag,torch_rows"`
	Corrections Page `yaml:"corrections" vars:"count"`
	Sources     Page `yaml:"sources"`
	AZ          Page `yaml:"az"`
	Handbook    struct {
		Card Text `yaml:"card" vars:"title"`
		// Layers name the notes' layers' chapters, in print order.
		Layers      []Layer `yaml:"layers"`
		Playground  Text    `yaml:"playground"`
		Env         Text    `yaml:"env"`
		Operations  Text    `yaml:"operations"`
		Corrections Text    `yaml:"corrections"`
		Reference   Text    `yaml:"reference"`
	} `yaml:"handbook"`
}

// Widget returns the playground widget with the given slug.
func (t *Texts) Widget(slug string) (Widget, bool) {
	for _, w := range t.Playground.Widgets {
		if w.Slug == slug {
			return w, true
		}
	}
	return Widget{}, false
}

// Load reads root/content/site.yaml.
func Load(root string) (*Texts, error) {
	src, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(Path)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", Path, err)
	}
	return Parse(Path, src)
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse decodes and checks the texts; name is used in messages.
func Parse(name string, src []byte) (*Texts, error) {
	var t Texts
	dec := yaml.NewDecoder(bytes.NewReader(src))
	dec.KnownFields(true)
	if err := dec.Decode(&t); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			if m := yamlLine.FindStringSubmatch(te.Errors[0]); m != nil {
				return nil, fmt.Errorf("%s:%s: %s", name, m[1], m[2])
			}
		}
		if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("%s:%s: %s", name, m[1], m[2])
		}
		return nil, fmt.Errorf("%s:1: %v", name, err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return nil, fmt.Errorf("%s:1: %v", name, err)
	}
	var doc *yaml.Node
	if len(root.Content) > 0 {
		doc = root.Content[0]
	}
	if err := check(name, reflect.ValueOf(&t).Elem(), doc, "", nil); err != nil {
		return nil, err
	}
	return &t, nil
}

var placeholder = regexp.MustCompile(`\{([a-z_]+)\}`)

// check walks v (decoded from node n) and requires every Text to be set and to use only
// the placeholders vars allows; key is v's dotted path, for messages.
func check(name string, v reflect.Value, n *yaml.Node, key string, vars []string) error {
	line := 1
	if n != nil {
		line = n.Line
	}
	switch v.Kind() {
	case reflect.String:
		if v.Type() != reflect.TypeOf(Text("")) {
			if v.String() == "" {
				return fmt.Errorf("%s:%d: %s is missing", name, line, key)
			}
			return nil
		}
		s := v.String()
		if strings.TrimSpace(s) == "" {
			return fmt.Errorf("%s:%d: %s is missing", name, line, key)
		}
		for _, m := range placeholder.FindAllStringSubmatch(s, -1) {
			if !slices.Contains(vars, m[1]) {
				allowed := "none"
				if len(vars) > 0 {
					allowed = "{" + strings.Join(vars, "}, {") + "}"
				}
				return fmt.Errorf("%s:%d: %s: {%s} is not a placeholder it may use (it may use %s)", name, line, key, m[1], allowed)
			}
		}
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			tag := strings.Split(f.Tag.Get("yaml"), ",")
			fv := v.Field(i)
			fvars := vars
			if vs := f.Tag.Get("vars"); vs != "" {
				fvars = strings.Split(vs, ",")
			}
			if f.Tag.Get("optional") == "true" && fv.String() == "" {
				continue
			}
			child := mapValue(n, tag[0])
			k := tag[0]
			if key != "" {
				k = key + "." + k
			}
			if child == nil {
				return fmt.Errorf("%s:%d: %s is missing", name, line, k)
			}
			if err := check(name, fv, child, k, fvars); err != nil {
				return err
			}
		}
	case reflect.Slice:
		if v.Len() == 0 {
			return fmt.Errorf("%s:%d: %s is empty", name, line, key)
		}
		for i := 0; i < v.Len(); i++ {
			var item *yaml.Node
			if n != nil && i < len(n.Content) {
				item = n.Content[i]
			}
			if err := check(name, v.Index(i), item, key+"["+strconv.Itoa(i)+"]", vars); err != nil {
				return err
			}
		}
	case reflect.Map:
		if v.Len() == 0 {
			return fmt.Errorf("%s:%d: %s is empty", name, line, key)
		}
		for _, k := range v.MapKeys() {
			if err := check(name, v.MapIndex(k), mapValue(n, k.String()), key+"."+k.String(), vars); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapValue returns the value node of key in mapping node n, or nil.
func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
