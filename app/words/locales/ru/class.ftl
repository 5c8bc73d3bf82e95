# Слова класса, которые сервер пишет в общее состояние (app/sessions), на языке класса — языке
# ведущего (почему — в app/routes/sessions.py).

class-poll-question = Какой шаг сломан?

# the join page (templates/join.html): why a code does not join
class-join-unknown = класса с кодом «{ $code }» нет: он закончился, или код набран с ошибкой
class-join-too-many = с этого адреса слишком много неизвестных кодов (не больше { $limit } в минуту); подождите минуту
