# The network's refusals and the class's view of votes per address (app/bodies.py,
# app/connections.py, app/sessions): issue 35.

net-body-too-slow = the request body arrives too slowly: { $received } bytes in { $seconds } s (this server waits { $grace } s, then needs at least { $rate } bytes a second): send it again
net-reserved-only = this server holds its maximum of connections; the few kept for the presenter, /healthz and joining a class take only those: retry in 5 s
net-follow-to-answer = answer from the class's page while it follows the class: a vote counts for a student whose page is following
