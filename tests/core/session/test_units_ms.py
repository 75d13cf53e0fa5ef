"""``ms`` never reads "0.0 ms" (issue 37: a fast program call's key said "steady call 0.0 ms")."""

from app.core.units import ms


def test_ms_switches_units_where_one_decimal_would_say_nothing():
    assert ms(0.012) == "12 µs" and ms(0.049) == "49 µs"
    assert ms(0.05) == "0.1 ms" and ms(9.46) == "9.5 ms" and ms(123.4) == "123 ms" and ms(1234) == "1.23 s"
    assert ms(0.0) == "0.0 ms" and ms(None) == "–"
