"""Hostile values, as bytes, for each kind of input position."""

NUMBERS = [
    b"0", b"-0", b"1", b"-1", b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808",
    b"-9223372036854775809", b"18446744073709551615", b"18446744073709551616", b"99999999999999999999999999",
    b"1e308", b"-1e308", b"1e309", b"4.9e-324", b"1.5", b"0.5", b".5", b"5.", b"1e3", b"0x10", b"+1", b"01",
    b"NaN", b"nan", b"Infinity", b"-Infinity", b"inf", b"2147483648", b"4294967296",
]

TEXT = [
    b"", b" ", b"  x  ", b"%", b"%%", b"%2", b"%zz", b"%00", b"%ff%fe", b"%C3%A9", b"%ED%A0%80", b"a b", b"a+b", b"+",
    b"\x00", b"\x01\x02\x7f", b"\t", b"\x1b[31m", b"\xc3\xa9", b"\xf0\x9f\x98\x80", b"\xff\xfe", b"\xed\xa0\x80",
    b"\xc0\x80", b"\x80", b"A" * 5120, b"%" * 5120, b"\xff" * 5000, b"\xc3\xa9" * 2600, b"../../etc/passwd", b"..",
    b".", b"/", b"//", b"\\", b"<script>alert(1)</script>", b"'\"", b"{{x}}", b"=", b",", b";", b",,,=,=", b"=x", b"x=",
    b"a=b=c", b"&", b"?", b"#", b"*", b"\"", b"W/\"x\"", b"null", b"true", b"[]", b"{}",
]

RANGES = [
    b"bytes=0-0", b"bytes=0-", b"bytes=-1", b"bytes=-0", b"bytes=0-9223372036854775807", b"bytes=9223372036854775807-",
    b"bytes=-9223372036854775807", b"bytes=-9223372036854775808", b"bytes=18446744073709551615-",
    b"bytes=18446744073709551616-", b"bytes=-18446744073709551616", b"bytes=9223372036854775806-9223372036854775807",
    b"bytes=1-0", b"bytes=0-1,2-3", b"bytes=5-6,", b"bytes = 5 - 6 ", b"BYTES=0-", b"bytes=--1", b"bytes=-", b"bytes=",
    b"bytes=1e3-", b"bytes=+1-2", b"bytes=0x1-", b"items=0-1", b"bytes=\xff-", b"bytes=0-0" + b",0-0" * 1000,
]

ENTITY_TAGS = [
    b"*", b"\"x\"", b"W/\"x\"", b"\"x\", W/\"y\"", b"\"", b"\"unterminated", b"W/", b",,,", b"\"a\"\"b\"",
    b"Tue, 15 Nov 1994 08:12:31 GMT", b"Thu, 01 Jan 1970 00:00:00 GMT", b"Sat, 01 Jan 10000 00:00:00 GMT",
    b"\"" + b"f" * 5000 + b"\"",
]

COOKIES = [
    b"depot_console=9223372036854775807.0.x", b"depot_console=-9223372036854775808.0.x",
    b"depot_console=9223372036854775808.0.x", b"depot_console=1e308.0.x", b"depot_console=NaN.0.x",
    b"depot_console=-1.0.x", b"depot_console=0.0.x", b"depot_console=...", b"depot_console=", b"depot_console",
    b"depot_console=\"a.b.c\"", b"depot_console=1.2", b"depot_console=a; depot_console=b", b"=; ;=;",
    b"depot_console=" + b"9" * 5000 + b".0.x", b"depot_console=1.%zz.%", b"depot_console=1.\xff.\xfe",
]

AUTHORIZATIONS = [
    b"Bearer", b"Bearer ", b"Bearer  ", b"bearer x", b"Basic YWRtaW46YWRtaW4=", b"Bearer depot_",
    b"Bearer depot_zzzzzzzzzzzz_" + b"0" * 64, b"Bearer depot_000000000000_" + b"0" * 64,
    b"Bearer depot_000000000000_" + b"0" * 63, b"Bearer depot__", b"Bearer " + b"A" * 5120, b"Bearer \xff\xfe",
]

FORWARDED_FOR = [
    b"1.2.3.4", b"::1", b"[::1]:80", b"1.2.3.4, 5.6.7.8", b"999.999.999.999", b"unknown", b"", b",", b"1.2.3.4:65536",
    b"fe80::1%eth0", b"2001:db8::" + b":1" * 100, b"1.2.3.4" + b", 1.2.3.4" * 800,
]

FORWARDED_PROTO = [b"https", b"HTTPS", b"http", b"https, http", b"", b"\xff", b"gopher"]

CONTENT_LENGTHS = [
    b"-1", b"0", b"1", b"9223372036854775807", b"9223372036854775808", b"18446744073709551616",
    b"99999999999999999999999999", b"1,1", b" 5", b"0x5", b"+5", b"1e3", b"", b"5 5",
]

TRANSFER_ENCODINGS = [b"chunked", b"gzip, chunked", b"chunked, gzip", b"identity", b"CHUNKED", b"chunked, chunked", b"x"]

CHUNKED_BODIES = [
    b"0\r\n\r\n", b"fffffffffffffffff\r\nx\r\n0\r\n\r\n", b"-1\r\nx\r\n0\r\n\r\n", b"7fffffffffffffff\r\nx\r\n0\r\n\r\n",
    b"1;ext=1\r\nx\r\n0\r\n\r\n", b"1\r\nx\r\n0\r\nDepot-Content-SHA256: " + b"0" * 64 + b"\r\n\r\n",
    b"1\r\nx\r\n0\r\nDepot-Content-SHA256: zz\r\n\r\n", b"1\r\nxx\r\n0\r\n\r\n", b"x\r\n", b"0\r\n",
]

COMPANION_FILES = [
    b"name=labels;size=1;sha256=" + b"0" * 64, b"name=labels;size=9223372036854775807;sha256=" + b"0" * 64,
    b"name=labels;size=-9223372036854775808;sha256=" + b"0" * 64, b"name=a;size=1;sha256=" + b"0" * 64 + b"," * 2,
    b",".join(b"name=f%d;size=4611686018427387904;sha256=" % i + b"0" * 64 for i in range(3)),
    b",".join(b"name=f%d;size=67108864;sha256=" % i + b"0" * 64 for i in range(16)),
    b",".join(b"name=f%d;size=1;sha256=" % i + b"0" * 64 for i in range(200)),
    b"name=;size=;sha256=", b"name", b";;;", b"=;=;=", b"name=labels;name=labels;size=1", b"name=\xff;size=1;sha256=x",
]

ATTRIBUTES = [
    b"tier=gold,beta=true", b"=", b"=x", b"x=", b",,,", b"a=%", b"a=%z", b"a=%ff", b"%ff=a", b"a=%C3%A9",
    b"a=b=c", b"a" * 4097 + b"=b", b"a=" + b"%41" * 1365, b"k=v," * 1000, b" = ", b"a= b ", b"a=\xff",
]


def for_header(name):
    """The values tried for a header, by what it carries."""
    lower = name.lower()
    special = {
        b"range": RANGES, b"if-range": ENTITY_TAGS, b"if-none-match": ENTITY_TAGS, b"if-match": ENTITY_TAGS,
        b"cookie": COOKIES, b"authorization": AUTHORIZATIONS, b"x-forwarded-for": FORWARDED_FOR,
        b"x-forwarded-proto": FORWARDED_PROTO, b"content-length": CONTENT_LENGTHS,
        b"transfer-encoding": TRANSFER_ENCODINGS, b"depot-companion-files": COMPANION_FILES,
        b"depot-attributes": ATTRIBUTES, b"depot-content-length": NUMBERS, b"depot-root-version": NUMBERS,
    }.get(lower, [])
    return special + NUMBERS + TEXT
