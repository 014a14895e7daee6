module example.com/importer

go 1.26.0

require github.com/nettune/nettune v0.0.0

require (
	github.com/HdrHistogram/hdrhistogram-go v1.4.0 // indirect
	github.com/beevik/etree v1.8.1 // indirect
	github.com/safchain/ethtool v0.7.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/nettune/nettune => ../..
