# The network's refusals and the class's view of votes per address (app/bodies.py,
# app/connections.py, app/sessions): issue 35.

net-body-too-slow = the request body arrives too slowly: { $received } bytes in { $seconds } s (this server waits { $grace } s, then needs at least { $rate } bytes a second): send it again
