package sender

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/emersion/go-smtp"
)

// Sending limits. The mailboxes hosts use limit how much an account may
// send (free Gmail about 500 recipients in a rolling 24 hours, Outlook.com
// about 300); past the limit the provider refuses every message, often
// with a 5xx, until older sends age out of its window. Such a reply says
// nothing about the message: it is a wait, never a loss. docs/mail.md
// ("Sending limits") lists the replies read as a limit, and why.

// limitPhrases are words of the replies providers give when an account
// has sent too much, lower case.
var limitPhrases = []string{
	"sending limit",                // Gmail "Daily user sending limit exceeded"; Fastmail, Yahoo "sending limit"
	"daily user sending",           // Gmail
	"sending quota",                // Gmail "Daily user sending quota exceeded"
	"smtp relay limit",             // Google Workspace relay
	"submission quota",             // Microsoft 365 "Submission quota exceeded"
	"submissionquotaexceeded",      // Microsoft 365 STOREDRV.Submission.Exception
	"message rate limit",           // Microsoft 365 "message rate limit exceeded"
	"recipient rate limit",         // Microsoft 365 "recipient rate limit exceeded"
	"limit for message recipients", // Outlook.com 5.1.90 "reached your daily limit for message recipients"
	"thread limit",                 // Microsoft 365 "sender thread limit exceeded"
	"rate limit",                   // generic: "rate limited", "rate limit exceeded"
	"ratelimit",
	"throttl",           // Microsoft "throttled", "throttling"
	"too many messages", // generic: "Too many messages. Try again in 92 seconds."
	"unexpected volume", // Yahoo [TSS04] "deferred due to unexpected volume"
	"unusual rate",      // Gmail 4.7.0/4.7.28 "unusual rate of unsolicited mail"
	"daily limit",       // generic
}

// limitCodes are enhanced status codes that mean the account's sending is
// limited whatever the text.
var limitCodes = map[[2]int]bool{
	{4, 5}:  true, // X.4.5 mail system congestion: Gmail's 5.4.5 daily limit, 4.4.5 rate limits
	{1, 90}: true, // Outlook.com 5.1.90 daily recipient limit
}

// microsoftThrottle matches Microsoft's 4.7.500 to 4.7.699 "Access
// denied, please try again later" throttling codes.
var microsoftThrottle = regexp.MustCompile(`^4\.7\.[56][0-9][0-9]$`)

// IsSendingLimit reports whether err is a provider's reply saying the
// account may not send more for now.
func IsSendingLimit(err error) bool {
	var se *smtp.SMTPError
	if !errors.As(err, &se) {
		return false
	}
	return isLimitReply(se)
}

func isLimitReply(se *smtp.SMTPError) bool {
	ec := se.EnhancedCode
	hasEC := ec != (smtp.EnhancedCode{}) && ec != smtp.NoEnhancedCode
	if hasEC {
		if limitCodes[[2]int{ec[1], ec[2]}] {
			return true
		}
		if microsoftThrottle.MatchString(enhanced(ec)) {
			return true
		}
	}
	text := strings.ToLower(se.Message)
	for _, p := range limitPhrases {
		if strings.Contains(text, p) {
			return true
		}
	}
	return false
}

func enhanced(ec smtp.EnhancedCode) string {
	return fmt.Sprintf("%d.%d.%d", ec[0], ec[1], ec[2])
}

// addressLike matches what varies between two copies of one refusal: the
// addresses and numbers in its text.
var addressLike = regexp.MustCompile(`<[^>]*>|[^\s<>]+@[^\s<>]+|[0-9a-f]{8,}|\d+`)

// blockKey is what a 5xx refusal says without the parts that name the
// message or recipient, so that the same refusal of different messages
// can be told apart from refusals that each message earned; "" for a
// refusal that cannot mean the account is blocked: one about a recipient's
// address or mailbox (X.1.x, X.2.x), or one that is not an SMTP reply.
func blockKey(err error) string {
	var se *smtp.SMTPError
	var partial *RecipientsError
	if errors.As(err, &partial) || !errors.As(err, &se) || se.Code < 500 {
		return ""
	}
	ec := se.EnhancedCode
	if ec != (smtp.EnhancedCode{}) && ec != smtp.NoEnhancedCode && (ec[1] == 1 || ec[1] == 2) {
		return ""
	}
	return fmt.Sprintf("%d %s ", se.Code, enhanced(ec)) + addressLike.ReplaceAllString(strings.ToLower(se.Message), "#")
}
