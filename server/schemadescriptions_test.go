package server

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// schemaKeywords are the jsonschema tag entries invopop/jsonschema reads after a
// description: a bare comma in a description starts a new entry, and one that is not a
// keyword is dropped, cutting the description short in the OpenAPI document.
var schemaKeywords = map[string]bool{
	"title": true, "description": true, "type": true, "anchor": true, "enum": true, "default": true,
	"example": true, "format": true, "pattern": true, "minLength": true, "maxLength": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"multipleOf": true, "minItems": true, "maxItems": true, "uniqueItems": true, "readOnly": true,
	"writeOnly": true, "required": true, "nullable": true, "oneof_required": true, "anyof_required": true,
	"oneof_ref": true, "oneof_type": true, "anyof_ref": true, "anyof_type": true, "dependencies": true,
	"patternProperties": true, "omitempty": true, "omitzero": true,
}

// Every jsonschema tag in the module says its description whole: a comma in one is
// escaped (\\,), since invopop/jsonschema splits the tag at bare commas.
func TestSchemaDescriptionsAreWhole(t *testing.T) {
	fset := token.NewFileSet()
	n := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(node ast.Node) bool {
			field, ok := node.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			raw, err := strconv.Unquote(field.Tag.Value)
			if err != nil {
				return true
			}
			tag, ok := reflect.StructTag(raw).Lookup("jsonschema")
			if !ok {
				return true
			}
			n++
			entries := strings.Split(tag, ",")
			described := false
			for i, e := range entries {
				if i > 0 && strings.HasSuffix(entries[i-1], `\`) {
					continue // an escaped comma: the same entry
				}
				key, _, _ := strings.Cut(e, "=")
				if strings.HasPrefix(e, "description=") {
					described = true
					continue
				}
				if described && !schemaKeywords[key] {
					t.Errorf("%s: jsonschema description cut at a bare comma before %q (escape it as \\\\,)", fset.Position(field.Pos()), e)
					return true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 100 {
		t.Fatalf("read %d jsonschema tags: the walk missed the module's sources", n)
	}
}
