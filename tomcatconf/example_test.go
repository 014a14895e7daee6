package tomcatconf_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/nettune/nettune/tomcatconf"
)

// The Arm Neoverse Tomcat tuning guide's edits on a server.xml: 7 workers on the 8080 Connector and
// the access log commented out. Only the edited elements change.
func ExampleConfig_SetConnector() {
	src := `<?xml version="1.0" encoding="UTF-8"?>
<Server port="-1">
  <Service name="Catalina">
    <!-- <Connector port="8009" protocol="AJP/1.3"/> is a comment, not a Connector -->
    <Connector port="8080" protocol="HTTP/1.1"
               connectionTimeout="20000"
               redirectPort="8443" />
    <Engine name="Catalina" defaultHost="localhost">
      <Host name="localhost" appBase="webapps">
        <Valve className="org.apache.catalina.valves.AccessLogValve" directory='logs'
               pattern="%h %l %u %t &quot;%r&quot; %s %b" />
      </Host>
    </Engine>
  </Service>
</Server>
`
	c, err := tomcatconf.Parse("conf/server.xml", []byte(src))
	if err != nil {
		log.Fatal(err)
	}
	workers := 8 - 1 // CPUs - 1
	if _, err := c.SetConnector(tomcatconf.ConnectorQuery{Port: "8080"}, tomcatconf.ArmGuideConnectorAttrs(workers), nil); err != nil {
		log.Fatal(err)
	}
	if _, err := c.DisableAccessLog(tomcatconf.AccessLogComment); err != nil {
		log.Fatal(err)
	}
	fmt.Print(c.Diff())
	// Output:
	// --- a/conf/server.xml
	// +++ b/conf/server.xml
	// @@ -4,11 +4,15 @@
	//      <!-- <Connector port="8009" protocol="AJP/1.3"/> is a comment, not a Connector -->
	//      <Connector port="8080" protocol="HTTP/1.1"
	//                 connectionTimeout="20000"
	// -               redirectPort="8443" />
	// +               redirectPort="8443"
	// +               minSpareThreads="7"
	// +               maxThreads="7"
	// +               maxKeepAliveRequests="500000"
	// +               maxConnections="100000" />
	//      <Engine name="Catalina" defaultHost="localhost">
	//        <Host name="localhost" appBase="webapps">
	// -        <Valve className="org.apache.catalina.valves.AccessLogValve" directory='logs'
	// -               pattern="%h %l %u %t &quot;%r&quot; %s %b" />
	// +        <!--<Valve className="org.apache.catalina.valves.AccessLogValve" directory='logs'
	// +               pattern="%h %l %u %t &quot;%r&quot; %s %b" />-->
	//        </Host>
	//      </Engine>
	//    </Service>
}

// A typo in an attribute name is caught with the documented name, and
// nothing changes.
func ExampleConfig_SetConnector_typo() {
	c, err := tomcatconf.Parse("conf/server.xml", []byte(`<Server port="-1">
  <Service name="Catalina">
    <Connector port="8080" protocol="HTTP/1.1"/>
  </Service>
</Server>
`))
	if err != nil {
		log.Fatal(err)
	}
	q := tomcatconf.ConnectorQuery{Port: "8080"}
	_, err = c.SetConnector(q, []tomcatconf.Attr{{Name: "maxThread", Value: "7"}}, nil)
	fmt.Println(err)
	fmt.Println(errors.Is(err, tomcatconf.ErrUnknownAttr), c.Changed())
	_, err = c.SetConnector(q, []tomcatconf.Attr{{Name: "maxConnections", Value: "-1"}}, nil)
	fmt.Println(err, c.Changed())
	// Output:
	// tomcatconf: conf/server.xml line 3: <Connector> has no attribute "maxThread" in Tomcat 11.0.10's documentation; did you mean "maxThreads"?
	// true false
	// <nil> true
}

// Sizing maxThreads as the Arm Neoverse Tomcat tuning guide does, from a
// census under load.
func ExampleCensus_Recommend() {
	in, err := tomcatconf.FindInstance("")
	if err != nil {
		log.Fatal(err)
	}
	pid, err := in.PID()
	if err != nil {
		log.Fatal(err)
	}
	c, err := tomcatconf.TakeCensus(context.Background(), pid, 5*time.Second, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.Recommend(0).Reason)
}

// Starting Debian's Tomcat with the Arm guide's open-files limit and waiting
// until the example servlet answers.
func ExampleInstance_Start() {
	in, err := tomcatconf.FindInstance("")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	res, err := in.Start(ctx, &tomcatconf.StartOptions{ReadyURL: "http://127.0.0.1:8080/examples/servlets/servlet/HelloWorldExample"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("JVM %d ready in %s with %d open files\n", res.PID, res.Ready, res.NoFile)
	stop, err := in.Stop(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("stopped with %s\n", stop.Method)
}
