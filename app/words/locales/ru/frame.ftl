# Рамка каждой страницы (templates/base.html): ссылка «к содержимому», шапка, выбор языка.

language-name = Русский
frame-skip-link = Перейти к содержимому
frame-tagline = один шаг обучения маленького трансформера, операция за операцией
frame-language-switch = Язык
frame-type-size = A+ Крупный шрифт
    .title = Крупнее текст и графики — для проектора

## Страница входа в класс (templates/join.html)

join-title = Войти в класс
join-lede = Введите код, который показывает преподаватель: ваш экран будет следовать за его экраном шаг за шагом.
join-cannot = <strong>Не удаётся войти:</strong> { $error }
join-code = Код класса
