package loadgen

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// HelloWorldPath is where Tomcat's examples webapp serves its
// HelloWorldExample servlet, the page the Arm Neoverse Tomcat tuning guide
// and the ApacheBench walkthrough load.
const HelloWorldPath = "/examples/servlets/servlet/HelloWorldExample"

// helloWorldPage is the page Tomcat's HelloWorldExample servlet writes (its
// doGet, with the English resource bundle), byte for byte.
const helloWorldPage = `<!DOCTYPE html><html>
<head>
<meta charset="UTF-8" />
<title>Hello World!</title>
</head>
<body bgcolor="white">
<a href="../helloworld.html">
<img src="../images/code.gif" height=24 width=24 align=right border=0 alt="view code"></a>
<a href="../index.html">
<img src="../images/return.gif" height=24 width=24 align=right border=0 alt="return"></a>
<h1>Hello World!</h1>
</body>
</html>
`

// HelloWorld is a small built-in target: it serves helloWorldPage at
// HelloWorldPath (and every other path), so loadgen can be tried without a
// Tomcat. It is not a benchmark of anything.
type HelloWorld struct {
	// URL is the page's address, e.g.
	// http://127.0.0.1:40123/examples/servlets/servlet/HelloWorldExample.
	URL string
	ln  net.Listener
	srv *http.Server
	err chan error
}

// StartHelloWorld listens on addr (e.g. "127.0.0.1:0" for a free port) and
// serves the page until Close.
func StartHelloWorld(addr string) (*HelloWorld, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	page := []byte(helloWorldPage)
	clen := strconv.Itoa(len(page))
	h := &HelloWorld{
		URL: "http://" + ln.Addr().String() + HelloWorldPath,
		ln:  ln,
		err: make(chan error, 1),
		srv: &http.Server{
			ReadHeaderTimeout: 10 * time.Second,
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html;charset=UTF-8")
				w.Header().Set("Content-Length", clen)
				if r.Method != http.MethodHead {
					_, _ = w.Write(page)
				}
			}),
		},
	}
	go func() { h.err <- h.srv.Serve(ln) }()
	return h, nil
}

// Close stops the server and closes its connections.
func (h *HelloWorld) Close() error {
	err := h.srv.Close()
	if serr := <-h.err; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}
