//! Hive's aggregate `ngrams(sentences, n, k[, pf])`: the `k` most frequent `n`-grams of a
//! group's sentences (arrays of words, as `sentences` gives them), each with its estimated
//! frequency, as Hive's `NGramEstimator` counts them: exactly while at most `2 * k * pf`
//! distinct n-grams are held (`pf`, the precision factor, is at least `1000 / k`), trimmed
//! to the `k * pf` most frequent beyond that, so a large group's counts are estimates that
//! can only fall short. Hive only: Spark has no `ngrams`.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, Float64Array, ListBuilder, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef, Fields, Float64Type, Int64Type};
use datafusion::common::{DataFusionError, Result, ScalarValue};
use datafusion::logical_expr::function::{AccumulatorArgs, StateFieldsArgs};
use datafusion::logical_expr::{
    Accumulator, AggregateUDF, AggregateUDFImpl, Documentation, Signature, Volatility,
};

use super::bad_arguments;

pub fn aggregates() -> Vec<AggregateUDF> {
    vec![AggregateUDF::new_from_impl(NGrams {
        signature: Signature::user_defined(Volatility::Immutable),
    })]
}

/// An n-gram's fields in the result: Hive's `ngram` and `estfrequency`.
fn ngram_fields() -> Fields {
    Fields::from(vec![
        Field::new("ngram", DataType::new_list(DataType::Utf8, true), true),
        Field::new("estfrequency", DataType::Float64, true),
    ])
}

fn result_type() -> DataType {
    DataType::new_list(DataType::Struct(ngram_fields()), true)
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct NGrams {
    signature: Signature,
}

impl AggregateUDFImpl for NGrams {
    fn name(&self) -> &str {
        "ngrams"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn coerce_types(&self, types: &[DataType]) -> Result<Vec<DataType>> {
        let takes = "(array of sentences (arrays of strings) or of strings, n, k[, precision])";
        let words = |t: &DataType| match t {
            DataType::List(item) | DataType::LargeList(item) => {
                super::is_string(item.data_type()) || item.data_type().is_null()
            }
            _ => false,
        };
        let text = match types.first() {
            Some(DataType::List(item)) | Some(DataType::LargeList(item))
                if words(item.data_type()) =>
            {
                DataType::new_list(DataType::new_list(DataType::Utf8, true), true)
            }
            Some(t) if words(t) => DataType::new_list(DataType::Utf8, true),
            _ => return Err(bad_arguments(self.name(), takes, types)),
        };
        if !(3..=4).contains(&types.len()) || !types[1..].iter().all(super::is_integer) {
            return Err(bad_arguments(self.name(), takes, types));
        }
        Ok(std::iter::once(text)
            .chain(std::iter::repeat_n(DataType::Int64, types.len() - 1))
            .collect())
    }

    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(result_type())
    }

    fn documentation(&self) -> Option<&Documentation> {
        super::usage::documentation("ngrams")
    }

    fn state_fields(&self, args: StateFieldsArgs) -> Result<Vec<FieldRef>> {
        Ok(super::list_and_parameters_state(
            args.name,
            result_type(),
            &["k", "pf"],
        ))
    }

    fn accumulator(&self, _: AccumulatorArgs) -> Result<Box<dyn Accumulator>> {
        Ok(Box::<NGramEstimator>::default())
    }
}

/// Hive's `NGramEstimator`: the n-grams seen and their counts, at most `2 * k * pf` of them.
#[derive(Debug, Default)]
struct NGramEstimator {
    /// `(k, pf)`, from the first row that gives them.
    limits: Option<(usize, usize)>,
    counts: HashMap<Vec<String>, f64>,
}

impl NGramEstimator {
    fn set_limits(&mut self, k: i64, pf: Option<i64>) -> Result<()> {
        if self.limits.is_some() {
            return Ok(());
        }
        let (Ok(k @ 1..), Ok(pf @ 1..)) = (usize::try_from(k), usize::try_from(pf.unwrap_or(1)))
        else {
            return Err(DataFusionError::Execution(
                "ngrams: k and the precision factor must be positive".into(),
            ));
        };
        // Hive's minimum precision.
        let pf = if k * pf < 1000 { 1000 / k } else { pf };
        self.limits = Some((k, pf));
        Ok(())
    }

    fn add(&mut self, ngram: Vec<String>, count: f64) {
        *self.counts.entry(ngram).or_insert(0.0) += count;
        if let Some((k, pf)) = self.limits {
            if self.counts.len() > 2 * k * pf {
                self.trim(k * pf);
            }
        }
    }

    /// The n-grams, most frequent first and in the order of their words among equals.
    fn ranked(&self) -> Vec<(&Vec<String>, f64)> {
        let mut ranked: Vec<_> = self.counts.iter().map(|(g, c)| (g, *c)).collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        ranked
    }

    /// Keeps the `keep` most frequent n-grams.
    fn trim(&mut self, keep: usize) {
        let dropped: Vec<Vec<String>> = self
            .ranked()
            .into_iter()
            .skip(keep)
            .map(|(g, _)| g.clone())
            .collect();
        for ngram in dropped {
            self.counts.remove(&ngram);
        }
    }

    /// The `n`-grams of one sentence's words; none that holds a NULL word.
    fn add_sentence(&mut self, words: &ArrayRef, n: usize) {
        let words = words.as_string::<i32>();
        if words.len() < n {
            return;
        }
        for start in 0..=words.len() - n {
            let ngram: Option<Vec<String>> = (start..start + n)
                .map(|i| (!words.is_null(i)).then(|| words.value(i).to_owned()))
                .collect();
            if let Some(ngram) = ngram {
                self.add(ngram, 1.0);
            }
        }
    }

    /// The n-grams and counts as one list scalar of the result's type.
    fn to_scalar(&self, ranked: &[(&Vec<String>, f64)]) -> Result<ScalarValue> {
        let mut ngrams = ListBuilder::new(StringBuilder::new());
        for (ngram, _) in ranked {
            for word in *ngram {
                ngrams.values().append_value(word);
            }
            ngrams.append(true);
        }
        let counts = Float64Array::from_iter_values(ranked.iter().map(|(_, c)| *c));
        super::struct_list(
            ngram_fields(),
            vec![Arc::new(ngrams.finish()), Arc::new(counts)],
        )
    }
}

/// The first non-NULL integer of an argument's values.
fn first_integer(values: Option<&ArrayRef>) -> Option<i64> {
    values?.as_primitive::<Int64Type>().iter().flatten().next()
}

impl Accumulator for NGramEstimator {
    fn update_batch(&mut self, values: &[ArrayRef]) -> Result<()> {
        let (Some(n), Some(k)) = (first_integer(values.get(1)), first_integer(values.get(2)))
        else {
            return Ok(());
        };
        let n = usize::try_from(n)
            .ok()
            .filter(|&n| n > 0)
            .ok_or_else(|| DataFusionError::Execution("ngrams: n must be positive".into()))?;
        self.set_limits(k, first_integer(values.get(3)))?;
        for text in values[0].as_list::<i32>().iter().flatten() {
            match text.data_type() {
                DataType::List(_) => {
                    for sentence in text.as_list::<i32>().iter().flatten() {
                        self.add_sentence(&sentence, n);
                    }
                }
                _ => self.add_sentence(&text, n),
            }
        }
        Ok(())
    }

    fn merge_batch(&mut self, states: &[ArrayRef]) -> Result<()> {
        let (ks, pfs) = (
            states[1].as_primitive::<Int64Type>(),
            states[2].as_primitive::<Int64Type>(),
        );
        for (row, ngrams) in states[0].as_list::<i32>().iter().enumerate() {
            let Some(ngrams) = ngrams else { continue };
            if !ks.is_null(row) {
                self.set_limits(ks.value(row), (!pfs.is_null(row)).then(|| pfs.value(row)))?;
            }
            let ngrams = ngrams.as_struct();
            let words = ngrams.column(0).as_list::<i32>();
            let counts = ngrams.column(1).as_primitive::<Float64Type>();
            for (ngram, count) in words.iter().zip(counts.iter()) {
                let (Some(ngram), Some(count)) = (ngram, count) else {
                    continue;
                };
                let ngram = ngram
                    .as_string::<i32>()
                    .iter()
                    .map(|w| w.unwrap_or_default().to_owned())
                    .collect();
                self.add(ngram, count);
            }
        }
        Ok(())
    }

    fn state(&mut self) -> Result<Vec<ScalarValue>> {
        let ranked = self.ranked();
        let (k, pf) = match self.limits {
            Some((k, pf)) => (Some(k as i64), Some(pf as i64)),
            None => (None, None),
        };
        Ok(vec![
            self.to_scalar(&ranked)?,
            ScalarValue::Int64(k),
            ScalarValue::Int64(pf),
        ])
    }

    /// The `k` most frequent n-grams; NULL for a group without any, as Hive.
    fn evaluate(&mut self) -> Result<ScalarValue> {
        let Some((k, _)) = self.limits.filter(|_| !self.counts.is_empty()) else {
            return ScalarValue::try_from(result_type());
        };
        let mut ranked = self.ranked();
        ranked.truncate(k);
        self.to_scalar(&ranked)
    }

    fn size(&self) -> usize {
        std::mem::size_of_val(self)
            + self
                .counts
                .keys()
                .map(|g| g.iter().map(|w| w.len() + 24).sum::<usize>() + 32)
                .sum::<usize>()
    }
}
