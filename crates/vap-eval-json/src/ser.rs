//! `serde_json::to_string`'s compact text, written by a serializer whose own methods are
//! compiled in this crate (for speed, where the package's root crate is built for size): the
//! braces, commas, keys and scalars of a `Serialize` type's text. Strings and numbers are
//! written by serde_json itself, so the text is serde_json's byte for byte
//! (vap-eval's `tests/result_text.rs`). vap-eval's results go through it: with serde_json's
//! own serializer, every call of the result's serialisation (a key's quotes, a comma) was code
//! compiled at `z` in vap-eval, where serde's derives are instantiated (bench/README.md, "The
//! user path, fourth round"). serde_json's `raw_value` and `arbitrary_precision` tokens, features
//! the workspace does not enable, are not special-cased.

use serde::ser::{self, Impossible, Serialize};
use serde_json::Error;

/// `value` as serde_json's compact JSON text.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    let mut w = Writer { out: Vec::with_capacity(4096) };
    value.serialize(&mut w)?;
    // Only serde_json's own output and ASCII punctuation were written.
    String::from_utf8(w.out).map_err(|_| ser::Error::custom("invalid UTF-8"))
}

pub struct Writer {
    out: Vec<u8>,
}

impl Writer {
    #[inline(never)]
    fn str(&mut self, v: &str) -> Result<(), Error> {
        // Nothing to escape (serde_json escapes only `"`, `\` and the bytes below 0x20): the
        // string between quotes as serde_json writes it, found so 8 bytes at a time (the
        // reader's scan of a string) rather than by serde_json's byte-by-byte table.
        let b = v.as_bytes();
        if crate::plain_call(b, 0) == b.len() {
            self.out.reserve(b.len() + 2);
            self.out.push(b'"');
            self.out.extend_from_slice(b);
            self.out.push(b'"');
            return Ok(());
        }
        serde_json::to_writer(&mut self.out, v)
    }
    #[inline(never)]
    fn key(&mut self, first: bool, key: &str) -> Result<(), Error> {
        if !first {
            self.out.push(b',');
        }
        self.str(key)?;
        self.out.push(b':');
        Ok(())
    }
    #[inline(never)]
    fn open(&mut self, b: u8) {
        self.out.push(b);
    }
    #[inline(never)]
    fn comma(&mut self, first: bool) {
        if !first {
            self.out.push(b',');
        }
    }
    #[inline(never)]
    fn raw(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    #[inline(never)]
    fn u64(&mut self, v: u64) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &v)
    }
    #[inline(never)]
    fn i64(&mut self, v: i64) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &v)
    }
    #[inline(never)]
    fn f64(&mut self, v: f64) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &v)
    }
}

/// An object or array being written; `first`: nothing written in it yet.
pub struct Compound<'a> {
    w: &'a mut Writer,
    first: bool,
    /// The closing bytes (`}`, `]`, or `]}` / `}}` for an enum variant's contents).
    close: &'static [u8],
}

impl<'a> ser::Serializer for &'a mut Writer {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'a>;
    type SerializeTuple = Compound<'a>;
    type SerializeTupleStruct = Compound<'a>;
    type SerializeTupleVariant = Compound<'a>;
    type SerializeMap = Compound<'a>;
    type SerializeStruct = Compound<'a>;
    type SerializeStructVariant = Compound<'a>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.raw(if v { b"true" } else { b"false" });
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.i64(v.into())
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.i64(v.into())
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.i64(v.into())
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.i64(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.u64(v.into())
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.u64(v.into())
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.u64(v.into())
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.u64(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        self.f64(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.str(v)
    }
    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        serde_json::to_writer(&mut self.out, &serde_json::Value::from(v))
    }
    fn serialize_none(self) -> Result<(), Error> {
        self.raw(b"null");
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        self.raw(b"null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        self.raw(b"null");
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.str(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.open(b'{');
        self.key(true, variant)?;
        value.serialize(&mut *self)?;
        self.open(b'}');
        Ok(())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a>, Error> {
        self.open(b'[');
        Ok(Compound { w: self, first: true, close: b"]" })
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'a>, Error> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Error> {
        self.open(b'{');
        self.key(true, variant)?;
        self.open(b'[');
        Ok(Compound { w: self, first: true, close: b"]}" })
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a>, Error> {
        self.open(b'{');
        Ok(Compound { w: self, first: true, close: b"}" })
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a>, Error> {
        self.open(b'{');
        Ok(Compound { w: self, first: true, close: b"}" })
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Compound<'a>, Error> {
        self.open(b'{');
        self.key(true, variant)?;
        self.open(b'{');
        Ok(Compound { w: self, first: true, close: b"}}" })
    }
}

impl Compound<'_> {
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.w.comma(self.first);
        self.first = false;
        value.serialize(&mut *self.w)
    }
    fn field<T: Serialize + ?Sized>(&mut self, key: &str, value: &T) -> Result<(), Error> {
        self.w.key(self.first, key)?;
        self.first = false;
        value.serialize(&mut *self.w)
    }
    fn close(self) -> Result<(), Error> {
        self.w.raw(self.close);
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTuple for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeTupleVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.element(value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.w.comma(self.first);
        self.first = false;
        key.serialize(MapKey(&mut *self.w))?;
        self.w.open(b':');
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        value.serialize(&mut *self.w)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

/// serde_json's map keys: a string as it is; a number, bool or char quoted; anything else an
/// error.
struct MapKey<'a>(&'a mut Writer);

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

impl MapKey<'_> {
    fn quoted<T: Serialize>(self, v: T) -> Result<(), Error> {
        self.0.open(b'"');
        serde_json::to_writer(&mut self.0.out, &v)?;
        self.0.open(b'"');
        Ok(())
    }
}

impl ser::Serializer for MapKey<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.str(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.str(v.encode_utf8(&mut [0; 4]))
    }
    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.quoted(v)
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(key_must_be_a_string());
        }
        self.quoted(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(key_must_be_a_string());
        }
        self.quoted(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.0.str(v)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_must_be_a_string())
    }
}

impl ser::SerializeStruct for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

impl ser::SerializeStructVariant for Compound<'_> {
    type Ok = ();
    type Error = Error;
    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.field(key, value)
    }
    fn end(self) -> Result<(), Error> {
        self.close()
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn strings_as_serde_json_writes_them() {
        let mut texts: Vec<String> = [
            "",
            "a",
            "plain ascii text longer than a word",
            "é😀 ünïcödé, and \u{7f} \u{80} \u{ffff}",
            "\"",
            "\\",
            "a\"b\\c",
            "\u{0}\u{1}\u{8}\u{9}\n\u{b}\u{c}\r\u{1f} ",
            "0123456\"89abcdef",
            "0123456789abcde\n",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Every byte below 0x80 at every place of a 17-byte string.
        for at in 0..17 {
            for c in 0..0x80u8 {
                let mut s = vec![b'x'; 17];
                s[at] = c;
                texts.push(String::from_utf8(s).unwrap());
            }
        }
        for t in &texts {
            assert_eq!(super::to_string(t).unwrap(), serde_json::to_string(t).unwrap(), "{t:?}");
            let map = serde_json::json!({ t.as_str(): [t] });
            assert_eq!(super::to_string(&map).unwrap(), serde_json::to_string(&map).unwrap());
        }
    }
}
