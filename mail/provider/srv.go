package provider

import (
	"context"
	"net"
	"sort"
	"strconv"
	"strings"
)

// Resolver is the part of net.Resolver the lookup uses.
type Resolver interface {
	LookupSRV(ctx context.Context, service, proto, name string) (string, []*net.SRV, error)
	LookupMX(ctx context.Context, name string) ([]*net.MX, error)
}

// srvServer finds a server by the SRV records of RFC 6186 and RFC 8314:
// each service in order (implicit TLS first), the record of lowest
// priority and, among equals, highest weight. A target of "." says the
// service is not offered.
func srvServer(ctx context.Context, r Resolver, domain string, services []srvService) (string, bool) {
	for _, svc := range services {
		_, recs, err := r.LookupSRV(ctx, svc.name, "tcp", domain)
		if err != nil || len(recs) == 0 {
			continue
		}
		sort.SliceStable(recs, func(i, j int) bool {
			if recs[i].Priority != recs[j].Priority {
				return recs[i].Priority < recs[j].Priority
			}
			return recs[i].Weight > recs[j].Weight
		})
		target := strings.TrimSuffix(recs[0].Target, ".")
		if target == "" || recs[0].Port == 0 {
			continue
		}
		return svc.scheme + "://" + net.JoinHostPort(target, strconv.Itoa(int(recs[0].Port))), true
	}
	return "", false
}

type srvService struct{ name, scheme string }

var (
	imapServices = []srvService{{"imaps", "imaps"}, {"imap", "imap"}}
	smtpServices = []srvService{{"submissions", "smtps"}, {"submission", "smtp"}}
)
