//! `serde_json::to_string`'s compact text, written by a serializer whose own methods are
//! compiled in this crate (for speed, where the package's root crate is built for size): the
//! braces, commas, keys and scalars of a `Serialize` type's text. Strings and numbers are
//! written by serde_json itself, so the text is serde_json's byte for byte
//! (vap-eval's `tests/result_text.rs`, which holds the package's results, written by [`js`],
//! to this text). The package's texts (a denial's status, Kyverno's reports) go through it:
//! with serde_json's own serializer, every call of the serialisation (a key's quotes, a comma)
//! was code compiled at `z` in vap-eval, where serde's derives are instantiated (bench/README.md,
//! "The user path, fourth round"). serde_json's `raw_value` and `arbitrary_precision` tokens,
//! features the workspace does not enable, are not special-cased.
//!
//! [`js`]: the package's results as programs for its JS builder, which makes the value
//! `JSON.parse` makes of this text.

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

/// `v`'s serde_json text appended to `out`: a string that needs escapes, bytes. (serde_json's
/// `to_writer` needs its `std` feature, which the workspace leaves off: with it, every
/// `serde_json::Map` hashes its keys with SipHash rather than foldhash, bench/README.md.)
fn via<T: Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> Result<(), Error> {
    out.extend_from_slice(&serde_json::to_vec(v)?);
    Ok(())
}

/// A float as serde_json writes it: zmij's shortest form, `null` when not finite.
fn float(out: &mut Vec<u8>, finite: bool, text: impl FnOnce(&mut zmij::Buffer) -> &str) {
    if finite {
        out.extend_from_slice(text(&mut zmij::Buffer::new()).as_bytes());
    } else {
        out.extend_from_slice(b"null");
    }
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
        via(&mut self.out, v)
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
        self.out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    #[inline(never)]
    fn i64(&mut self, v: i64) -> Result<(), Error> {
        self.out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    #[inline(never)]
    fn f64(&mut self, v: f64) -> Result<(), Error> {
        float(&mut self.out, v.is_finite(), |b| b.format_finite(v));
        Ok(())
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
        self.out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
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
        self.out.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        float(&mut self.out, v.is_finite(), |b| b.format_finite(v));
        Ok(())
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
        via(&mut self.out, &serde_json::Value::from(v))
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

/// Where [`MapKey`] writes a key: the JSON text ([`Writer`]) or a result program
/// ([`js::Program`]).
trait KeySink {
    fn map_key(&mut self, key: &str) -> Result<(), Error>;
}

impl KeySink for Writer {
    fn map_key(&mut self, key: &str) -> Result<(), Error> {
        self.str(key)
    }
}

/// serde_json's map keys: a string as it is; a number, bool or char quoted; anything else an
/// error.
struct MapKey<'a, K: KeySink + ?Sized>(&'a mut K);

fn key_must_be_a_string() -> Error {
    ser::Error::custom("key must be a string")
}

fn float_key_must_be_finite() -> Error {
    ser::Error::custom("float key must be finite (got NaN or +/-inf)")
}

impl<K: KeySink + ?Sized> MapKey<'_, K> {
    /// A number or bool as serde_json writes it, as a string (its text needs no escape).
    fn quoted<T: Serialize>(self, v: T) -> Result<(), Error> {
        self.0.map_key(&serde_json::to_string(&v)?)
    }
}

impl<K: KeySink + ?Sized> ser::Serializer for MapKey<'_, K> {
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
        self.0.map_key(v)
    }
    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.map_key(v.encode_utf8(&mut [0; 4]))
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
            return Err(float_key_must_be_finite());
        }
        self.quoted(v)
    }
    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        if !v.is_finite() {
            return Err(float_key_must_be_finite());
        }
        self.quoted(v)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_none(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
        Err(key_must_be_a_string())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, v: &'static str) -> Result<(), Error> {
        self.0.map_key(v)
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

/// A `Serialize` value as a program for a JavaScript builder (vap-eval's `src/wasm.rs`), which
/// makes the same JS value `JSON.parse` makes of [`to_string`]'s text, without the text: V8's
/// `JSON.parse` looks every member's name up in its string table and creates every object
/// member by member (≈ 18 µs for the 6.4 KB benchmark result in Node 20), where the builder
/// takes struct field names from a table of JS strings kept across calls (≈ 5 µs).
///
/// The program is a list of 32-bit words, each a tag (low 3 bits) and an argument (the rest),
/// the strings' UTF-8 in one text (the builder decodes it once and slices it), the numbers
/// that are not small integers in a list of doubles. Containers are closed by [`END`].
pub mod js {
    use super::{ser, Error, KeySink, Serialize};

    /// A string: the next `arg` UTF-16 units of the text.
    pub const STR: u32 = 0;
    /// An integer in `0..2^29`: `arg`.
    pub const INT: u32 = 1;
    /// A number: the next double.
    pub const NUM: u32 = 2;
    /// `null` (`arg` 0), `false` (1), `true` (2).
    pub const LIT: u32 = 3;
    /// An array; its elements follow, then [`END`].
    pub const ARR: u32 = 4;
    /// An object; its members (a key op, then the value) follow, then [`END`].
    pub const OBJ: u32 = 5;
    /// A member's name from the builder's table: `arg >> 1` is its index; with `arg & 1` the
    /// name is new to the builder: its length in UTF-16 units is the next word and its text is
    /// next in the text (the builder stores it at the index).
    pub const KEY: u32 = 6;
    /// A member's name given in full: the next `arg` UTF-16 units of the text (a map key not in
    /// the table).
    pub const KEYS: u32 = 7;
    /// The end of an array or object.
    pub const END: u32 = LIT | 3 << 3;

    /// Arguments must be below this.
    const LIMIT: usize = 1 << 29;
    /// The table's slots (a power of two); it takes at most half as many names.
    const SLOTS: usize = 2048;
    /// The map keys' slots (a power of two; at most half as many keys), the longest key in
    /// bytes and their bytes in all.
    const KEY_SLOTS: usize = 512;
    const KEY_LEN: usize = 64;
    const KEY_BYTES: usize = 8192;

    /// The names the builder has in its table, kept across calls with the builder's own: struct
    /// field names (`&'static str`, known by address) and map keys (by their text: an object's
    /// member names, which recur from call to call). Fixed in size, allocated once (its vectors
    /// never grow: what they allocated during a call would come from the wasm module's per-call
    /// arena and pin its chunks): a name that does not fit is given in full ([`KEYS`]).
    pub struct Names {
        /// Open addressing on the name's address: the index + 1 in `names`, 0 for an empty slot.
        slots: Vec<u32>,
        names: Vec<Name>,
        /// Open addressing on the map key's text: the index + 1 in `keys`, 0 for an empty slot;
        /// each key's bytes in `key_bytes` (start, length) and its index in `names`.
        key_slots: Vec<u32>,
        keys: Vec<(u32, u32, u32)>,
        key_bytes: Vec<u8>,
    }

    struct Name {
        text: &'static str,
        /// The builder has it (a program that defined it was built).
        sent: bool,
        /// Defined by the program being written.
        pending: bool,
    }

    impl Default for Names {
        fn default() -> Names {
            Names {
                slots: vec![0; SLOTS],
                names: Vec::with_capacity(SLOTS / 2),
                key_slots: vec![0; KEY_SLOTS],
                keys: Vec::with_capacity(KEY_SLOTS / 2),
                key_bytes: Vec::with_capacity(KEY_BYTES),
            }
        }
    }

    impl Names {
        /// The index of `name`, added when new; `None` when the table is full.
        fn index(&mut self, name: &'static str) -> Option<u32> {
            let addr = name.as_ptr() as usize as u32;
            let mut slot = (addr.wrapping_mul(0x9E37_79B1) >> 21) as usize & (SLOTS - 1);
            loop {
                match self.slots[slot] {
                    0 => break,
                    n => {
                        let i = n - 1;
                        let known = &self.names[i as usize].text;
                        if known.as_ptr() == name.as_ptr() && known.len() == name.len() {
                            return Some(i);
                        }
                    }
                }
                slot = (slot + 1) & (SLOTS - 1);
            }
            if self.names.len() >= SLOTS / 2 {
                return None;
            }
            self.names.push(Name { text: name, sent: false, pending: false });
            self.slots[slot] = self.names.len() as u32;
            Some(self.names.len() as u32 - 1)
        }

        /// The index of the map key `key`, added when new; `None` when it does not fit.
        #[inline(never)]
        fn key(&mut self, key: &str) -> Option<u32> {
            let b = key.as_bytes();
            if b.len() > KEY_LEN {
                return None;
            }
            // FNV-1a.
            let h =
                b.iter().fold(0x811C_9DC5u32, |h, &c| (h ^ u32::from(c)).wrapping_mul(0x0100_0193));
            let mut slot = h as usize & (KEY_SLOTS - 1);
            loop {
                match self.key_slots[slot] {
                    0 => break,
                    n => {
                        let (from, len, i) = self.keys[n as usize - 1];
                        if self.key_bytes[from as usize..][..len as usize] == *b {
                            return Some(i);
                        }
                    }
                }
                slot = (slot + 1) & (KEY_SLOTS - 1);
            }
            if self.names.len() >= SLOTS / 2
                || self.keys.len() >= KEY_SLOTS / 2
                || self.key_bytes.len() + b.len() > KEY_BYTES
            {
                return None;
            }
            let i = self.names.len() as u32;
            // (No struct field name is found at its address: `index` looks for those only.)
            self.names.push(Name { text: "", sent: false, pending: false });
            self.keys.push((self.key_bytes.len() as u32, b.len() as u32, i));
            self.key_bytes.extend_from_slice(b);
            self.key_slots[slot] = self.keys.len() as u32;
            Some(i)
        }
    }

    /// A program being written ([`Program::value`]), then handed to the builder.
    pub struct Program<'n> {
        pub ops: Vec<u32>,
        pub text: Vec<u8>,
        pub nums: Vec<f64>,
        names: &'n mut Names,
        /// The names this program defines.
        fresh: Vec<u32>,
    }

    impl<'n> Program<'n> {
        pub fn new(names: &'n mut Names) -> Program<'n> {
            Program {
                ops: Vec::with_capacity(1024),
                text: Vec::with_capacity(8192),
                nums: Vec::new(),
                names,
                fresh: Vec::new(),
            }
        }

        /// Appends `value`'s program.
        pub fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
            value.serialize(self)
        }

        /// Reopens the object just written (its [`END`] removed) to add members ([`field`](Self::field)
        /// then [`close`](Self::close)); `false` when the program does not end an object.
        pub fn reopen(&mut self) -> bool {
            // An object's program starts with OBJ; only its END is last when the program is one
            // value that is an object.
            if self.ops.first() == Some(&OBJ) && self.ops.last() == Some(&END) {
                self.ops.pop();
                return true;
            }
            false
        }

        /// A member of a reopened object.
        pub fn field<T: Serialize + ?Sized>(
            &mut self,
            key: &'static str,
            value: &T,
        ) -> Result<(), Error> {
            self.key(key)?;
            value.serialize(self)
        }

        pub fn close(&mut self) {
            self.ops.push(END);
        }

        /// The builder has built the program: the names it defined are in its table.
        pub fn built(mut self) {
            for i in std::mem::take(&mut self.fresh) {
                let name = &mut self.names.names[i as usize];
                name.sent = true;
                name.pending = false;
            }
        }

        #[inline(never)]
        fn op(&mut self, tag: u32, arg: usize) -> Result<(), Error> {
            if arg >= LIMIT {
                return Err(ser::Error::custom("value too large"));
            }
            self.ops.push(tag | (arg as u32) << 3);
            Ok(())
        }

        /// `s` appended to the text; its length in UTF-16 units.
        #[inline(never)]
        fn text(&mut self, s: &str) -> usize {
            self.text.extend_from_slice(s.as_bytes());
            utf16_len(s)
        }

        #[inline(never)]
        fn str(&mut self, s: &str) -> Result<(), Error> {
            let n = self.text(s);
            self.op(STR, n)
        }

        #[inline(never)]
        fn key(&mut self, key: &'static str) -> Result<(), Error> {
            // (The builder defines a name found on `Object.prototype`, `__proto__`, as an own
            // member, as `JSON.parse` does, whether it comes from its table or in full.)
            match self.names.index(key) {
                Some(i) => self.name(i, key),
                None => self.map_key(key),
            }
        }

        /// The name `i` of the table, whose text is `text`.
        #[inline(never)]
        fn name(&mut self, i: u32, text: &str) -> Result<(), Error> {
            let name = &mut self.names.names[i as usize];
            if name.sent || name.pending {
                return self.op(KEY, (i as usize) << 1);
            }
            name.pending = true;
            self.fresh.push(i);
            self.op(KEY, (i as usize) << 1 | 1)?;
            // The length word: the length itself, not an op.
            let n = self.text(text);
            self.ops.push(n as u32);
            Ok(())
        }

        #[inline(never)]
        fn int(&mut self, v: u64) -> Result<(), Error> {
            if v < LIMIT as u64 {
                return self.op(INT, v as usize);
            }
            self.num(v as f64)
        }

        #[inline(never)]
        fn num(&mut self, v: f64) -> Result<(), Error> {
            if !v.is_finite() {
                // serde_json writes `null`.
                self.ops.push(LIT);
                return Ok(());
            }
            self.ops.push(NUM);
            self.nums.push(v);
            Ok(())
        }

        #[inline(never)]
        fn open(&mut self, tag: u32) -> Compound<'_, 'n> {
            self.ops.push(tag);
            Compound { p: self, ends: 1 }
        }
    }

    impl Drop for Program<'_> {
        /// Not built: the names it defined are not in the builder's table.
        fn drop(&mut self) {
            for &i in &self.fresh {
                self.names.names[i as usize].pending = false;
            }
        }
    }

    /// The length in UTF-16 units of `s`: a unit per character, two for one beyond U+FFFF.
    fn utf16_len(s: &str) -> usize {
        let b = s.as_bytes();
        if b.is_ascii() {
            return b.len();
        }
        b.iter().map(|&c| usize::from(c & 0xC0 != 0x80) + usize::from(c >= 0xF0)).sum()
    }

    /// An array or object being written, closed by `ends` [`END`]s (two for an enum variant's
    /// contents).
    pub struct Compound<'a, 'n> {
        p: &'a mut Program<'n>,
        ends: u8,
    }

    impl Compound<'_, '_> {
        fn close(self) -> Result<(), Error> {
            for _ in 0..self.ends {
                self.p.ops.push(END);
            }
            Ok(())
        }
    }

    /// A map key: from the table, or given in full.
    impl KeySink for Program<'_> {
        #[inline(never)]
        fn map_key(&mut self, key: &str) -> Result<(), Error> {
            if let Some(i) = self.names.key(key) {
                return self.name(i, key);
            }
            let n = self.text(key);
            self.op(KEYS, n)
        }
    }

    impl<'a, 'n> ser::Serializer for &'a mut Program<'n> {
        type Ok = ();
        type Error = Error;
        type SerializeSeq = Compound<'a, 'n>;
        type SerializeTuple = Compound<'a, 'n>;
        type SerializeTupleStruct = Compound<'a, 'n>;
        type SerializeTupleVariant = Compound<'a, 'n>;
        type SerializeMap = Compound<'a, 'n>;
        type SerializeStruct = Compound<'a, 'n>;
        type SerializeStructVariant = Compound<'a, 'n>;

        fn serialize_bool(self, v: bool) -> Result<(), Error> {
            self.ops.push(LIT | (1 + u32::from(v)) << 3);
            Ok(())
        }
        fn serialize_i8(self, v: i8) -> Result<(), Error> {
            self.serialize_i64(v.into())
        }
        fn serialize_i16(self, v: i16) -> Result<(), Error> {
            self.serialize_i64(v.into())
        }
        fn serialize_i32(self, v: i32) -> Result<(), Error> {
            self.serialize_i64(v.into())
        }
        // Integers beyond 2^53 as `JSON.parse` reads their digits: the nearest double (`as`
        // rounds to nearest, ties to even, as the parse does).
        fn serialize_i64(self, v: i64) -> Result<(), Error> {
            match u64::try_from(v) {
                Ok(v) => self.int(v),
                Err(_) => self.num(v as f64),
            }
        }
        fn serialize_i128(self, v: i128) -> Result<(), Error> {
            self.num(v as f64)
        }
        fn serialize_u8(self, v: u8) -> Result<(), Error> {
            self.int(v.into())
        }
        fn serialize_u16(self, v: u16) -> Result<(), Error> {
            self.int(v.into())
        }
        fn serialize_u32(self, v: u32) -> Result<(), Error> {
            self.int(v.into())
        }
        fn serialize_u64(self, v: u64) -> Result<(), Error> {
            self.int(v)
        }
        fn serialize_u128(self, v: u128) -> Result<(), Error> {
            self.num(v as f64)
        }
        fn serialize_f32(self, v: f32) -> Result<(), Error> {
            // serde_json writes an f32's shortest digits, which `JSON.parse` reads as a double.
            // A non-finite one is `null` (its text does not parse: NaN, which `num` writes so).
            let digits = serde_json::to_string(&v)?;
            self.num(digits.parse().unwrap_or(f64::NAN))
        }
        fn serialize_f64(self, v: f64) -> Result<(), Error> {
            self.num(v)
        }
        fn serialize_char(self, v: char) -> Result<(), Error> {
            self.str(v.encode_utf8(&mut [0; 4]))
        }
        fn serialize_str(self, v: &str) -> Result<(), Error> {
            self.str(v)
        }
        fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
            let c = self.open(ARR);
            for &b in v {
                c.p.int(b.into())?;
            }
            c.close()
        }
        fn serialize_none(self) -> Result<(), Error> {
            self.ops.push(LIT);
            Ok(())
        }
        fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
            value.serialize(self)
        }
        fn serialize_unit(self) -> Result<(), Error> {
            self.ops.push(LIT);
            Ok(())
        }
        fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
            self.ops.push(LIT);
            Ok(())
        }
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            v: &'static str,
        ) -> Result<(), Error> {
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
            self.ops.push(OBJ);
            self.key(variant)?;
            value.serialize(&mut *self)?;
            self.ops.push(END);
            Ok(())
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'a, 'n>, Error> {
            Ok(self.open(ARR))
        }
        fn serialize_tuple(self, _: usize) -> Result<Compound<'a, 'n>, Error> {
            Ok(self.open(ARR))
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Compound<'a, 'n>, Error> {
            Ok(self.open(ARR))
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            variant: &'static str,
            _: usize,
        ) -> Result<Compound<'a, 'n>, Error> {
            self.ops.push(OBJ);
            self.key(variant)?;
            self.ops.push(ARR);
            Ok(Compound { p: self, ends: 2 })
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Compound<'a, 'n>, Error> {
            Ok(self.open(OBJ))
        }
        fn serialize_struct(self, _: &'static str, _: usize) -> Result<Compound<'a, 'n>, Error> {
            Ok(self.open(OBJ))
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            variant: &'static str,
            _: usize,
        ) -> Result<Compound<'a, 'n>, Error> {
            self.ops.push(OBJ);
            self.key(variant)?;
            self.ops.push(OBJ);
            Ok(Compound { p: self, ends: 2 })
        }
    }

    impl ser::SerializeSeq for Compound<'_, '_> {
        type Ok = ();
        type Error = Error;
        fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
            value.serialize(&mut *self.p)
        }
        fn end(self) -> Result<(), Error> {
            self.close()
        }
    }

    impl ser::SerializeTuple for Compound<'_, '_> {
        type Ok = ();
        type Error = Error;
        fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
            value.serialize(&mut *self.p)
        }
        fn end(self) -> Result<(), Error> {
            self.close()
        }
    }

    impl ser::SerializeTupleStruct for Compound<'_, '_> {
        type Ok = ();
        type Error = Error;
        fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
            value.serialize(&mut *self.p)
        }
        fn end(self) -> Result<(), Error> {
            self.close()
        }
    }

    impl ser::SerializeTupleVariant for Compound<'_, '_> {
        type Ok = ();
        type Error = Error;
        fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
            value.serialize(&mut *self.p)
        }
        fn end(self) -> Result<(), Error> {
            self.close()
        }
    }

    impl ser::SerializeMap for Compound<'_, '_> {
        type Ok = ();
        type Error = Error;
        fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
            key.serialize(super::MapKey(&mut *self.p))
        }
        fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
            value.serialize(&mut *self.p)
        }
        fn end(self) -> Result<(), Error> {
            self.close()
        }
    }

    impl ser::SerializeStruct for Compound<'_, '_> {
        type Ok = ();
        type Error = Error;
        fn serialize_field<T: Serialize + ?Sized>(
            &mut self,
            key: &'static str,
            value: &T,
        ) -> Result<(), Error> {
            self.p.key(key)?;
            value.serialize(&mut *self.p)
        }
        fn end(self) -> Result<(), Error> {
            self.close()
        }
    }

    impl ser::SerializeStructVariant for Compound<'_, '_> {
        type Ok = ();
        type Error = Error;
        fn serialize_field<T: Serialize + ?Sized>(
            &mut self,
            key: &'static str,
            value: &T,
        ) -> Result<(), Error> {
            self.p.key(key)?;
            value.serialize(&mut *self.p)
        }
        fn end(self) -> Result<(), Error> {
            self.close()
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn programs_name_fields_once() {
        use super::js::*;
        use serde::ser::{SerializeStruct, Serializer};
        struct S {
            a: u32,
            b: Vec<Option<f64>>,
            c: std::collections::BTreeMap<&'static str, bool>,
        }
        impl serde::Serialize for S {
            fn serialize<W: Serializer>(&self, w: W) -> Result<W::Ok, W::Error> {
                let mut s = w.serialize_struct("S", 3)?;
                s.serialize_field("a", &self.a)?;
                s.serialize_field("é😀", &self.b)?;
                s.serialize_field("c", &self.c)?;
                s.end()
            }
        }
        let v = S { a: 1 << 29, b: vec![None, Some(-0.0)], c: [("__proto__", true)].into() };
        let mut names = Names::default();
        let mut p = Program::new(&mut names);
        p.value(&v).unwrap();
        assert_eq!(
            p.ops,
            [OBJ, KEY | 1 << 3, 1, NUM, KEY | 3 << 3, 3, ARR, LIT, NUM, END]
                .into_iter()
                .chain([KEY | 5 << 3, 1, OBJ, KEY | 7 << 3, 9, LIT | 2 << 3, END, END])
                .collect::<Vec<_>>()
        );
        assert_eq!(p.text, "aé😀c__proto__".as_bytes());
        assert_eq!(p.nums, [(1 << 29) as f64, -0.0]);
        // Not built: the next program defines the names again; built: it does not.
        drop(p);
        let mut p = Program::new(&mut names);
        p.value(&v).unwrap();
        assert_eq!(p.ops[1], KEY | 1 << 3);
        p.built();
        let mut p = Program::new(&mut names);
        p.value(&v).unwrap();
        assert_eq!(p.ops[1..3], [KEY, NUM]);
        assert!(p.reopen());
        p.field("d", "x").unwrap();
        p.close();
        assert_eq!(p.ops[p.ops.len() - 4..], [KEY | 9 << 3, 1, STR | 1 << 3, END]);
    }

    /// Map keys are in the table by their text (the same index for the same text, whoever owns
    /// it), but for a long one, given in full.
    #[test]
    fn map_keys_in_the_table_by_text() {
        use super::js::*;
        use std::collections::BTreeMap;
        let long = "k".repeat(65);
        let map = |k: &str| BTreeMap::from([(k.to_string(), 1), (long.clone(), 2)]);
        let mut names = Names::default();
        let mut p = Program::new(&mut names);
        p.value(&[map("a"), map("a")]).unwrap();
        let first = [OBJ, KEY | 1 << 3, 1, INT | 1 << 3, KEYS | 65 << 3, INT | 2 << 3, END];
        assert_eq!(p.ops[1..8], first);
        assert_eq!(p.ops[8..11], [OBJ, KEY, INT | 1 << 3]);
        p.built();
        let mut p = Program::new(&mut names);
        p.value(&map(&String::from("a"))).unwrap();
        assert_eq!(p.ops[..4], [OBJ, KEY, INT | 1 << 3, KEYS | 65 << 3]);
        p.value(&map("b")).unwrap();
        assert_eq!(p.ops[6..9], [OBJ, KEY | 3 << 3, 1]);
        p.built();
        // The table full (256 keys, "a" and "b" in it): the next keys given in full.
        let many: BTreeMap<String, u8> = (0..600).map(|i| (format!("k{i:03}"), 0)).collect();
        let mut p = Program::new(&mut names);
        p.value(&many).unwrap();
        let count = |tag| p.ops.iter().filter(|&&op| op & 7 == tag).count();
        assert_eq!((count(KEY), count(KEYS)), (254, 346));
    }

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

    /// Integers and floats of every width, and floats that are not finite, as serde_json
    /// writes them (the writer formats them with serde_json's own formatters, itoa and zmij).
    #[test]
    fn numbers_as_serde_json_writes_them() {
        fn same<T: serde::Serialize + std::fmt::Debug>(v: T) {
            assert_eq!(super::to_string(&v).unwrap(), serde_json::to_string(&v).unwrap(), "{v:?}");
        }
        for i in [0, 1, -1, 9, 10, -10, 99, 100, 12345, i64::MIN, i64::MAX, 1 << 53, -(1 << 53)] {
            same(i);
            same(i as i32);
            same(i as i8);
        }
        for u in [0, 1, 10, 255, 65535, u32::MAX as u64, u64::MAX] {
            same(u);
            same(u as u16);
        }
        same(i128::MIN);
        same(u128::MAX);
        for f in [
            0.0,
            -0.0,
            0.1,
            1.5,
            -2.25,
            1e21,
            1e-7,
            123456789.0,
            1e300,
            f64::MIN_POSITIVE,
            f64::MAX,
        ] {
            same(f);
            same(f as f32);
        }
        for f in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            same(f);
            same(f as f32);
        }
        same(serde_json::json!({"n": [1, -1, 1.5, u64::MAX, i64::MIN], "s": "x"}));
    }

    /// Map keys that are not strings (numbers, bools, chars, unit variants) are written quoted,
    /// and the others refused, as serde_json does.
    #[test]
    fn map_keys_as_serde_json_writes_them() {
        use std::collections::BTreeMap;
        #[derive(PartialEq, Eq, PartialOrd, Ord)]
        struct UnitVariant;
        impl serde::Serialize for UnitVariant {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_unit_variant("Unit", 0, "A")
            }
        }
        fn same<K: serde::Serialize + Ord>(k: K) {
            let map = BTreeMap::from([(k, 1)]);
            let ours = super::to_string(&map).map_err(|e| e.to_string());
            let theirs = serde_json::to_string(&map).map_err(|e| e.to_string());
            assert_eq!(ours, theirs);
        }
        same(-7i8);
        same(i64::MIN);
        same(u64::MAX);
        same(u128::MAX);
        same(true);
        same('é');
        same('"');
        same(UnitVariant);
        same("k\\ey");
        same(Some(1));
        same(());
        same(vec![1]);
        // Floats (not `Ord`): a finite one quoted, a NaN or infinity refused.
        struct FloatKey(f64);
        impl serde::Serialize for FloatKey {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.collect_map([(self.0, 1)])
            }
        }
        for f in [1.5, -0.0, 1e300, f64::NAN, f64::INFINITY] {
            let ours = super::to_string(&FloatKey(f)).map_err(|e| e.to_string());
            let theirs = serde_json::to_string(&FloatKey(f)).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{f}");
        }
    }
}
