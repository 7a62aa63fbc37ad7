"""XML from elsewhere (dlbkit.model.safexml): parsed, or refused with one ConfigError naming the file."""

import pytest

from dlbkit.errors import ConfigError
from dlbkit.model import safexml

ENTITY = b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>\n<r a="&x;"/>'
LAUGHS = b'<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;&a;">]>\n<r a="&b;"/>'
DOCTYPE = b'<?xml version="1.0"?>\n<!DOCTYPE r SYSTEM "https://example.org/r.dtd">\n<r a="1"><s/></r>'


def test_plain_xml_is_parsed_and_a_doctype_naming_a_dtd_is_allowed_by_default():
    root = safexml.parse(DOCTYPE, "f.xml", "an r file")
    assert root.tag == "r" and root.get("a") == "1" and [c.tag for c in root] == ["s"]


@pytest.mark.parametrize("data, refused", [(ENTITY, "EntitiesForbidden"), (LAUGHS, "EntitiesForbidden")])
@pytest.mark.parametrize("dtd", [True, False])
def test_entities_are_refused_whatever_dtd_says(data, refused, dtd):
    with pytest.raises(ConfigError) as e:
        safexml.parse(data, "f.xml", "an r file", dtd=dtd)
    # without dtd the DOCTYPE is refused first: either way the file is named and nothing is expanded
    assert e.value.field == "file f.xml" and e.value.value == (refused if dtd else "DTDForbidden")
    assert "refused for safety" in str(e.value)


def test_no_dtd_refuses_any_doctype():
    with pytest.raises(ConfigError) as e:
        safexml.parse(DOCTYPE, "f.xml", "an r file", dtd=False)
    assert e.value.value == "DTDForbidden" and "a DOCTYPE" in e.value.allowed


def test_bad_syntax_says_what_the_file_should_be():
    with pytest.raises(ConfigError) as e:
        safexml.parse(b"<r><s></r>", "f.xml", "an r file")
    assert e.value.field == "file f.xml" and e.value.allowed == "an r file"
    assert "mismatched tag" in e.value.value and "line 1" in e.value.value


def test_the_root_name_is_read_without_its_namespace(tmp_path):
    """The local name of the root element, namespace dropped; None for a file that is not XML up to its root
    (the reader of its kind then names the fault) or that is missing."""
    cases = {"p.xml": ('<?xml version="1.0"?>\n<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">\n'
                       '<platform version="4.1"></platform>', "platform"),
             "d.xml": ('<adag xmlns="http://pegasus.isi.edu/schema/DAX" version="3.6"><job id="a"/></adag>', "adag"),
             "bad.xml": ("<platform", None), "text.xml": ("not xml at all", None)}
    for name, (text, root) in cases.items():
        (tmp_path / name).write_text(text)
        assert safexml.root_name(tmp_path / name) == root, name
    assert safexml.root_name(tmp_path / "missing.xml") is None
