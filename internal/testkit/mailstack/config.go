//go:build linux

package mailstack

import (
	"bytes"
	"fmt"
	"path/filepath"
	"text/template"
)

// layout is where one stack keeps its files, and the values its
// configuration files are rendered from.
type layout struct {
	ID     string // unique per stack: in banners, greetings and process titles
	Dir    string // the stack's private temporary folder
	Domain string

	SMTPPort, IMAPPort, LMTPPort int

	MailUID, MailGID int
}

func (l layout) postfixConfDir() string  { return filepath.Join(l.Dir, "postfix", "conf") }
func (l layout) postfixQueueDir() string { return filepath.Join(l.Dir, "postfix", "queue") }
func (l layout) postfixDataDir() string  { return filepath.Join(l.Dir, "postfix", "data") }
func (l layout) postfixLog() string      { return filepath.Join(l.Dir, "postfix", "postfix.log") }
func (l layout) mailboxesMap() string    { return filepath.Join(l.postfixConfDir(), "mailboxes") }
func (l layout) dovecotDir() string      { return filepath.Join(l.Dir, "dovecot") }
func (l layout) dovecotConf() string     { return filepath.Join(l.dovecotDir(), "dovecot.conf") }
func (l layout) dovecotLog() string      { return filepath.Join(l.dovecotDir(), "dovecot.log") }
func (l layout) usersDir() string        { return filepath.Join(l.dovecotDir(), "users") }
func (l layout) mailDir() string         { return filepath.Join(l.Dir, "mail") }

// Postfix's main.cf. Every path points into the stack's folder, so nothing is
// shared with the system's Postfix or with another stack. Retry intervals are
// short because tests stop Dovecot on purpose and then wait for the queued
// mail; the defaults (minutes) would outlast any test timeout. They are not
// shorter than 3s, though: the queue manager scans the deferred queue every
// queue_run_delay and takes any file due within a second; a message it had
// just deferred, whose delivery agent still holds its lock, would then be
// found locked and put aside for a whole minute.
var mainCF = template.Must(template.New("main.cf").Parse(`# Written by mafiamail's internal/testkit/mailstack for one test run.
compatibility_level = 3.6
queue_directory = {{.Dir}}/postfix/queue
data_directory = {{.Dir}}/postfix/data
maillog_file = {{.Dir}}/postfix/postfix.log
maillog_file_prefixes = {{.Dir}}
readme_directory = no
biff = no

myhostname = mx.{{.Domain}}
mydomain = {{.Domain}}
myorigin = $mydomain
smtpd_banner = $myhostname ESMTP mailstack-{{.ID}}
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
smtp_dns_support_level = disabled
lmtp_dns_support_level = disabled

# Nothing is delivered locally or relayed: the one domain goes to Dovecot,
# other domains are refused at RCPT, unknown users too (550).
mydestination =
relay_domains =
alias_maps =
alias_database =
local_recipient_maps =
local_transport = error:5.1.1 local delivery is disabled
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = reject_unauth_destination
virtual_mailbox_domains = {{.Domain}}
virtual_mailbox_maps = hash:{{.Dir}}/postfix/conf/mailboxes
virtual_transport = lmtp:inet:127.0.0.1:{{.LMTPPort}}
# One recipient per LMTP transaction: Dovecot adds Delivered-To only to mail
# delivered to a single recipient, and tests tell plus-addresses sharing a
# mailbox apart by it.
lmtp_destination_recipient_limit = 1
recipient_delimiter = +

# Large enough for the tests' oversized mail (25 MiB and more), which the
# host, not the MTA, must refuse; the default is 10 MB.
message_size_limit = 67108864
mailbox_size_limit = 0
virtual_mailbox_limit = 0

smtpd_error_sleep_time = 0
smtpd_soft_error_limit = 100
smtpd_hard_error_limit = 1000
# No flow control: Postfix would otherwise slow a client that sends faster
# than Dovecot takes the mail, to a message a second, and a test's flood of
# thousands would take hours to hand in.
in_flow_delay = 0
queue_run_delay = 1s
minimal_backoff_time = 3s
maximal_backoff_time = 4s
`))

// Postfix's master.cf: the SMTP listener on the stack's port plus the
// internal services a delivery needs, none chrooted (the queue is not laid
// out for a chroot).
var masterCF = template.Must(template.New("master.cf").Parse(`# Written by mafiamail's internal/testkit/mailstack for one test run.
127.0.0.1:{{.SMTPPort}} inet n - n - - smtpd
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
`))

// Dovecot 2.3's dovecot.conf, complete in itself (nothing from /etc/dovecot
// is included). Each user has a passwd-file of their own, so that a user
// added while Dovecot runs is found on the first lookup: Dovecot checks a
// file it already read for changes at most once a second. The instance name
// keeps the processes of parallel stacks apart in ps.
var dovecotConf = template.Must(template.New("dovecot.conf").Parse(`# Written by mafiamail's internal/testkit/mailstack for one test run.
instance_name = mailstack-{{.ID}}
base_dir = {{.Dir}}/dovecot/run
state_dir = {{.Dir}}/dovecot/state
log_path = {{.Dir}}/dovecot/dovecot.log
protocols = imap lmtp
listen = 127.0.0.1
hostname = imap.{{.Domain}}
login_greeting = mailstack-{{.ID}} ready.
shutdown_clients = yes

ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login
auth_username_format = %Ln
auth_failure_delay = 0

mail_location = maildir:~/Maildir
first_valid_uid = {{.MailUID}}
first_valid_gid = {{.MailGID}}
namespace inbox {
  inbox = yes
  separator = /
}

recipient_delimiter = +
lmtp_save_to_detail_mailbox = no
lmtp_hdr_delivery_address = final

passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%Ln {{.Dir}}/dovecot/users/%Ln
}
userdb {
  driver = static
  args = uid={{.MailUID}} gid={{.MailGID}} home={{.Dir}}/mail/%Ln
}

protocol imap {
  mail_max_userip_connections = 100
}

service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = {{.IMAPPort}}
  }
  inet_listener imaps {
    port = 0
  }
}

service anvil {
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}

service lmtp {
  inet_listener lmtp {
    address = 127.0.0.1
    port = {{.LMTPPort}}
  }
}
`))

func render(t *template.Template, l layout) ([]byte, error) {
	var b bytes.Buffer
	if err := t.Execute(&b, l); err != nil {
		return nil, fmt.Errorf("render %s: %w", t.Name(), err)
	}
	return b.Bytes(), nil
}
