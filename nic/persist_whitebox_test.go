package nic

import (
	"reflect"
	"testing"
)

// linkSection never panics, and a [Link] section it read, rendered into a
// LinkFile, reads back the same (the channel counts aside).
func FuzzLinkSection(f *testing.F) {
	f.Add([]byte("[Match]\nOriginalName=*\n\n[Link]\nNamePolicy=keep kernel database onboard slot path\nAlternativeNamesPolicy=database onboard slot path\nMACAddressPolicy=persistent\n"))
	f.Add([]byte("[Link]\n# c\n; c\n Name = eth0 \nCombinedChannels=4\n[Link]\nMTUBytes=9000\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		link := linkSection(data)
		lf := LinkFile{File: "10-x.link", Match: []LinkSetting{{"OriginalName", "x"}}, Link: link, Channels: ChannelsUpdate{Combined: Count(1)}}
		out, err := lf.Render()
		if err != nil {
			return
		}
		again := linkSection(out)
		if !reflect.DeepEqual(link, again) && !(len(link) == 0 && len(again) == 0) {
			t.Fatalf("%q -> %q\n%q", link, again, out)
		}
	})
}
