# The classroom's words the server writes into the shared state (app/sessions), in the class's
# language: the presenter's (app/routes/sessions.py says why).

class-poll-question = Which step is broken?
