package cliflag

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
)

// SetFromFile sets flags from the JSON object in the file at path: each
// key is a flag's name, each value what the command line would give it (a
// string, a number, a boolean, or a list of strings and numbers, joined by commas as
// a list flag takes them, a comma inside an item written "\,", which the
// list flag's parser must take for a comma of the item). Keys named in refused (the file's own flag) are
// errors. Parse the command line again afterwards, so that its flags
// override the file's; Given then holds both. Every error names the file
// and the key, and is a usage error.
func (f *FlagSet) SetFromFile(path string, refused ...string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return Usage(err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return Usagef("%s: want a JSON object of flag names and values: %w", path, err)
	}
	if dec.More() {
		return Usagef("%s: want one JSON object of flag names and values: more follows it", path)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	// In a fixed order, so that the first bad key is always the same.
	slices.Sort(keys)
	for _, k := range keys {
		if f.Lookup(k) == nil || slices.Contains(refused, k) {
			return Usagef("%s: %q is not a flag this file can set (-h lists the flags)", path, k)
		}
		v, err := flagText(m[k])
		if err != nil {
			return Usagef("%s: %q: %w", path, k, err)
		}
		if err := f.Set(k, v); err != nil {
			return Usagef("%s: %q: invalid value %q: %w", path, k, v, err)
		}
	}
	return nil
}

// flagText is a JSON value as a flag's command-line text.
func flagText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			switch x := e.(type) {
			case string:
				parts[i] = strings.ReplaceAll(x, ",", `\,`)
			case json.Number:
				parts[i] = x.String()
			default:
				return "", fmt.Errorf("item %d of the list: want a string or a number, got %v", i+1, e)
			}
		}
		return strings.Join(parts, ","), nil
	}
	return "", fmt.Errorf("want a string, a number, a boolean or a list of strings or numbers, got %v", v)
}
