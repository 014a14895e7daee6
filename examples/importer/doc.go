// Package importer is a module of its own, outside nettune's module path,
// that imports nettune's public packages as any other Go module would:
// its go.mod replaces github.com/nettune/nettune with this checkout, and
// Go refuses it any internal/ import. Its tests call each package's main
// entry points, so an API only this repository could call fails to build
// here. CI runs them (cd examples/importer && go test ./...).
package importer
