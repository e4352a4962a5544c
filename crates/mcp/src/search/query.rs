//! A search request → weighted terms grouped into concepts.
//!
//! Each English word of the request, and each Chinese word the glossary recognises, is one
//! **concept**. A concept contributes its own term (weight 1) and expansions: synonyms,
//! glossary translations in both directions, and for Chinese the raw n-grams (so a
//! Chinese-described tool matches Chinese requests directly). Ranking rewards tools that
//! match more concepts, not just one concept many times.

use super::lexicon::Lexicon;
use super::tokenize::{han_runs, terms};
use std::collections::HashMap;

/// Weight of a word as typed.
const ORIGINAL: f32 = 1.0;
/// Weight of the joined form of a multi-part identifier (`search_issu`).
const JOINED: f32 = 0.5;
/// Weight of an English synonym.
const SYNONYM: f32 = 0.45;
/// Weight of the English translation of a Chinese word.
const TRANSLATION: f32 = 0.9;
/// Weight of a synonym of a translation.
const TRANSLATION_SYNONYM: f32 = 0.4;
/// Weight of the Chinese gloss of an English word.
const GLOSS: f32 = 0.5;
/// Weight of a raw Han n-gram.
const HAN_NGRAM: f32 = 0.4;
/// At most this many distinct terms are used.
const MAX_TERMS: usize = 96;

/// One term to look up.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryTerm {
    pub term: String,
    pub weight: f32,
    /// The concept it stands for, if any (joined forms and n-grams of unknown words have none).
    pub concept: Option<usize>,
}

/// A parsed request.
#[derive(Debug, Clone, Default)]
pub(crate) struct Query {
    pub terms: Vec<QueryTerm>,
    /// Words of the request that form concepts (their display form).
    pub concepts: Vec<String>,
}

impl Query {
    pub(crate) fn parse(text: &str) -> Self {
        let lex = Lexicon::get();
        let mut builder = Builder::default();
        // English (and other Latin) words. `terms` also yields Han n-grams; those are handled
        // below, per run, so skip them here.
        let mut previous_parts: Vec<String> = Vec::new();
        for term in terms(text) {
            if term.chars().any(super::tokenize::is_han) {
                continue;
            }
            if term.contains('_') {
                builder.add(term, JOINED, None);
                continue;
            }
            if previous_parts.contains(&term) {
                continue;
            }
            previous_parts.push(term.clone());
            let concept = builder.concept(&term);
            for synonym in lex.synonyms(&term) {
                builder.add(synonym.clone(), SYNONYM, Some(concept));
            }
            for zh in lex.chinese_for(&term) {
                builder.add((*zh).to_owned(), GLOSS, Some(concept));
            }
            builder.add(term, ORIGINAL, Some(concept));
        }
        for run in han_runs(text) {
            for (word, stems) in lex.segment(&run) {
                let concept = builder.concept(word);
                builder.add(word.to_owned(), ORIGINAL, Some(concept));
                for stem in stems {
                    builder.add(stem.clone(), TRANSLATION, Some(concept));
                    for synonym in lex.synonyms(stem) {
                        builder.add(synonym.clone(), TRANSLATION_SYNONYM, Some(concept));
                    }
                }
            }
            for gram in terms(&run) {
                builder.add(gram, HAN_NGRAM, None);
            }
        }
        builder.finish()
    }
}

#[derive(Default)]
struct Builder {
    weights: HashMap<String, (f32, Option<usize>)>,
    order: Vec<String>,
    concepts: Vec<String>,
}

impl Builder {
    fn concept(&mut self, display: &str) -> usize {
        if let Some(i) = self.concepts.iter().position(|c| c == display) {
            return i;
        }
        self.concepts.push(display.to_owned());
        self.concepts.len() - 1
    }

    /// Keeps the highest weight per term (and that weight's concept).
    fn add(&mut self, term: String, weight: f32, concept: Option<usize>) {
        match self.weights.get_mut(&term) {
            Some(slot) => {
                if weight > slot.0 {
                    *slot = (weight, concept.or(slot.1));
                }
            }
            None => {
                if self.order.len() < MAX_TERMS {
                    self.order.push(term.clone());
                    self.weights.insert(term, (weight, concept));
                }
            }
        }
    }

    fn finish(self) -> Query {
        let terms = self
            .order
            .into_iter()
            .filter_map(|term| {
                let (weight, concept) = *self.weights.get(&term)?;
                Some(QueryTerm {
                    term,
                    weight,
                    concept,
                })
            })
            .collect();
        Query {
            terms,
            concepts: self.concepts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn weight(query: &Query, term: &str) -> Option<f32> {
        query
            .terms
            .iter()
            .find(|t| t.term == term)
            .map(|t| t.weight)
    }

    #[test]
    fn english_words_expand_to_synonyms_and_chinese() {
        let q = Query::parse("remove a folder");
        assert_eq!(q.concepts, ["remov", "folder"]);
        assert_eq!(weight(&q, "remov"), Some(ORIGINAL));
        assert_eq!(weight(&q, "delet"), Some(SYNONYM));
        assert_eq!(weight(&q, "directory"), Some(SYNONYM));
        assert_eq!(weight(&q, "删除"), Some(GLOSS));
    }

    #[test]
    fn chinese_words_translate() {
        let q = Query::parse("删除这个文件");
        assert_eq!(q.concepts, ["删除", "文件"]);
        assert_eq!(weight(&q, "delet"), Some(TRANSLATION));
        assert_eq!(weight(&q, "fil"), Some(TRANSLATION));
        assert_eq!(weight(&q, "删除"), Some(ORIGINAL));
        assert_eq!(weight(&q, "个文"), Some(HAN_NGRAM));
    }

    #[test]
    fn a_word_typed_wins_over_its_expansion() {
        let q = Query::parse("delete remove");
        assert_eq!(weight(&q, "delet"), Some(ORIGINAL));
        assert_eq!(weight(&q, "remov"), Some(ORIGINAL));
    }

    #[test]
    fn empty_requests_have_no_terms() {
        assert!(Query::parse("").terms.is_empty());
        assert!(Query::parse("the and of").terms.is_empty());
    }
}
