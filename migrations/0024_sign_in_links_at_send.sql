-- Sign-in mails no longer wait in the queue with their link: the link is made when the mail is
-- sent (docs/buyer-portal.md). Links queued or kept by an earlier version are taken out; a mail
-- still pending gets a new link of its own when it goes, and the old links simply expire.
update notifications set data = data - 'link' where kind = 'portal.sign_in' and data ? 'link';
