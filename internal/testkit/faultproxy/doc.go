// Package faultproxy puts the faults of real networks and mail servers
// between mafiamail and the servers it talks to, for end-to-end tests.
//
// SMTP is a proxy that understands SMTP: it forwards a client's session to
// an upstream server command by command and, where a test asks for it,
// fails one transaction the way real servers and networks fail them (a
// temporary refusal, a shutdown, a connection lost just before or just
// after the message was delivered). TCP forwards bytes and can make the
// network hang on demand, without closing anything, the fault an IMAP
// client under IDLE is worst at noticing.
//
// Both listen on 127.0.0.1 only.
package faultproxy
