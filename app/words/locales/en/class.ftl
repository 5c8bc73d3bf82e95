# The classroom's words the server writes into the shared state (app/sessions), in the class's
# language: the presenter's (app/routes/sessions.py says why).

class-poll-question = Which step is broken?

# the join page (templates/join.html): why a code does not join
class-join-unknown = no session with code '{ $code }': it ended, or the code is mistyped
class-join-too-many = too many unknown session codes from this address (limit { $limit } a minute); wait a minute
