//! Spark SQL's lambdas, `x -> x + 1` and `(acc, x) -> acc + x`, in the arguments of the
//! higher-order functions (`transform`, `filter`, `exists`, `aggregate`, ...; see
//! [`crate::hive_functions::higher_order`]).
//!
//! DataFusion plans a lambda argument of a higher-order function itself (captured columns,
//! nested lambdas, variables shadowing columns); what it lacks is the parse. Its default
//! dialect, sqlparser's `GenericDialect`, reads `x -> y` as the JSON operator and
//! `exists(...)` as `EXISTS (subquery)`. Statements are therefore parsed with
//! [`LambdaDialect`], the generic dialect with Spark's lambdas and its `exists` function,
//! [`sort_with_comparator`] sends `array_sort(a, (l, r) -> ...)`, which DataFusion's
//! own `array_sort` cannot take, to the comparator's sort, and [`variable_fields`] reads
//! `acc.sum` as the field `sum` of the variable `acc`.

use std::any::TypeId;
use std::ops::ControlFlow;

use datafusion::common::config::Dialect as ConfiguredDialect;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SessionState;
use datafusion::sql::parser::{DFParserBuilder, Statement};
use datafusion::sql::sqlparser::ast::{
    visit_expressions_mut, AccessExpr, Expr, FunctionArg, FunctionArgExpr, FunctionArguments,
    Ident, ObjectName, ObjectNamePart, Subscript, Value,
};
use datafusion::sql::sqlparser::dialect::{Dialect, GenericDialect};
use datafusion::sql::sqlparser::keywords::Keyword;
use datafusion::sql::sqlparser::parser::{Parser, ParserError};
use datafusion::sql::sqlparser::tokenizer::Token;

use crate::hive_functions::higher_order::SORT_WITH_COMPARATOR;

/// Parses one statement as DataFusion's `SessionState::sql_to_statement` does, with
/// [`LambdaDialect`] in place of the generic dialect (a session that chose another dialect,
/// `datafusion.sql_parser.dialect`, keeps it).
pub fn parse_statement(state: &SessionState, sql: &str) -> Result<Statement> {
    let options = state.config().options();
    let configured = options.sql_parser.dialect;
    if configured != ConfiguredDialect::Generic {
        return state.sql_to_statement(sql, &configured);
    }
    let mut statements = DFParserBuilder::new(sql)
        .with_dialect(&LambdaDialect)
        .with_recursion_limit(options.sql_parser.recursion_limit.get())
        .build()?
        .parse_statements()?;
    if statements.len() > 1 {
        return Err(DataFusionError::NotImplemented(
            "The context currently only supports a single SQL statement".to_owned(),
        ));
    }
    statements.pop_front().ok_or_else(|| {
        DataFusionError::Plan("No SQL statements were provided in the query string".to_owned())
    })
}

/// sqlparser's `GenericDialect`, which the engine parses with, plus Spark's lambdas
/// (`x -> ...`, `(x, i) -> ...`), `exists(array, x -> ...)` as a function call, a table's
/// `TABLESAMPLE` before its alias, and `MAP<K, V>` types.
///
/// Everything else is the generic dialect's: each of its settings is passed on (the list
/// below is `GenericDialect`'s overrides), and it answers to `dialect_of!(... is
/// GenericDialect)`, so that the parser's checks of the dialect's type hold.
#[derive(Debug, Default, Clone, Copy)]
pub struct LambdaDialect;

/// The generic dialect's `fn name(&self) -> bool` settings, passed on.
macro_rules! generic_settings {
    ($($setting:ident),* $(,)?) => {
        $(fn $setting(&self) -> bool {
            GenericDialect.$setting()
        })*
    };
}

impl Dialect for LambdaDialect {
    fn dialect(&self) -> TypeId {
        TypeId::of::<GenericDialect>()
    }

    fn supports_lambda_functions(&self) -> bool {
        true
    }

    /// Hive's and Spark's order: `FROM t TABLESAMPLE (10 ROWS) s`
    /// ([`super::table_samples`]).
    fn supports_table_sample_before_alias(&self) -> bool {
        true
    }

    /// Hive's and Spark's `MAP<K, V>` ([`super::map_types`]).
    fn supports_map_literal_with_angle_brackets(&self) -> bool {
        true
    }

    fn parse_prefix(&self, parser: &mut Parser) -> Option<Result<Expr, ParserError>> {
        // Spark's `exists(array, x -> ...)`: `exists` and `(` not followed by a query, which
        // stays `EXISTS (SELECT ...)`.
        let exists = matches!(
            &parser.peek_token_ref().token,
            Token::Word(w) if w.keyword == Keyword::EXISTS && w.quote_style.is_none()
        );
        if !exists || parser.peek_nth_token_ref(1).token != Token::LParen {
            return None;
        }
        let query = match &parser.peek_nth_token_ref(2).token {
            Token::Word(w) => matches!(w.keyword, Keyword::SELECT | Keyword::WITH),
            token => *token == Token::LParen,
        };
        if query {
            return None;
        }
        let Token::Word(word) = parser.next_token().token else {
            unreachable!("the token was just seen to be a word");
        };
        Some(parser.parse_function(ObjectName::from(vec![Ident::new(word.value)])))
    }

    fn is_delimited_identifier_start(&self, ch: char) -> bool {
        GenericDialect.is_delimited_identifier_start(ch)
    }

    fn is_identifier_start(&self, ch: char) -> bool {
        GenericDialect.is_identifier_start(ch)
    }

    fn is_identifier_part(&self, ch: char) -> bool {
        GenericDialect.is_identifier_part(ch)
    }

    generic_settings!(
        supports_unicode_string_literal,
        supports_partition_by_after_order_by,
        supports_array_join_syntax,
        supports_group_by_expr,
        supports_group_by_with_modifier,
        supports_left_associative_joins_without_parens,
        supports_connect_by,
        supports_match_recognize,
        supports_pipe_operator,
        supports_start_transaction_modifier,
        supports_window_function_null_treatment_arg,
        supports_dictionary_syntax,
        supports_window_clause_named_window_reference,
        supports_parenthesized_set_variables,
        supports_select_wildcard_except,
        support_map_literal_syntax,
        allow_extract_custom,
        allow_extract_single_quotes,
        supports_extract_comma_syntax,
        supports_create_view_comment_syntax,
        supports_parens_around_table_factor,
        supports_values_as_table_factor,
        supports_create_index_with_clause,
        supports_explain_with_utility_options,
        supports_limit_comma,
        supports_update_order_by,
        supports_from_first_select,
        supports_projection_trailing_commas,
        supports_asc_desc_in_column_definition,
        supports_try_convert,
        supports_bitwise_shift_operators,
        supports_comment_on,
        supports_load_extension,
        supports_named_fn_args_with_assignment_operator,
        supports_struct_literal,
        supports_empty_projections,
        supports_nested_comments,
        supports_multiline_comment_hints,
        supports_user_host_grantee,
        supports_string_escape_constant,
        supports_array_typedef_with_brackets,
        supports_match_against,
        supports_set_names,
        supports_comma_separated_set_assignments,
        supports_filter_during_aggregation,
        supports_select_wildcard_exclude,
        supports_data_type_signed_suffix,
        supports_interval_options,
        supports_quote_delimited_string,
        supports_select_wildcard_replace,
        supports_select_wildcard_ilike,
        supports_select_wildcard_rename,
        supports_optimize_table,
        supports_install,
        supports_detach,
        supports_prewhere,
        supports_with_fill,
        supports_limit_by,
        supports_interpolate,
        supports_settings,
        supports_select_format,
        supports_comment_optimizer_hint,
        supports_constraint_keyword_without_name,
        supports_key_column_option,
        supports_comma_separated_trim,
        supports_cte_without_as,
        supports_select_item_multi_column_alias,
        supports_xml_expressions,
    );
}

/// `array_sort(a, (l, r) -> ...)`, Spark's sort by a comparator, calls the higher-order
/// function [`SORT_WITH_COMPARATOR`]: DataFusion looks a name up among the scalar functions
/// first, and its `array_sort(a[, 'ASC'|'DESC'])` cannot take a lambda. Without a lambda,
/// `array_sort` stays DataFusion's.
pub(super) fn sort_with_comparator(expr: &mut Expr) {
    let Expr::Function(function) = expr else {
        return;
    };
    let [ObjectNamePart::Identifier(name)] = function.name.0.as_slice() else {
        return;
    };
    if !name.value.eq_ignore_ascii_case("array_sort") {
        return;
    }
    let FunctionArguments::List(list) = &function.args else {
        return;
    };
    let has_lambda = list.args.iter().any(|arg| {
        matches!(
            arg,
            FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Lambda(_)))
        )
    });
    if has_lambda {
        function.name = ObjectName::from(vec![Ident::new(SORT_WITH_COMPARATOR)]);
    }
}

/// In a lambda's body, `acc.sum` (and `acc.a.b`) is the field `sum` of the struct the
/// variable `acc` holds, as in Spark, where DataFusion would look for a column `sum` of a
/// table `acc`: it becomes `acc['sum']`. A name with a variable's name first means the
/// variable, as in Spark, in the lambda's body and the lambdas nested in it.
pub(super) fn variable_fields(expr: &mut Expr) {
    let Expr::Lambda(lambda) = expr else {
        return;
    };
    let variables: Vec<String> = lambda
        .params
        .iter()
        .map(|p| p.name.value.to_ascii_lowercase())
        .collect();
    let _ = visit_expressions_mut(lambda.body.as_mut(), |expr| {
        if let Expr::CompoundIdentifier(parts) = expr {
            let named = parts
                .first()
                .is_some_and(|first| variables.contains(&first.value.to_ascii_lowercase()));
            if named && parts.len() > 1 {
                let mut parts = std::mem::take(parts);
                let variable = parts.remove(0);
                *expr = Expr::CompoundFieldAccess {
                    root: Box::new(Expr::Identifier(variable)),
                    access_chain: parts
                        .into_iter()
                        .map(|field| {
                            AccessExpr::Subscript(Subscript::Index {
                                index: Expr::value(Value::SingleQuotedString(field.value)),
                            })
                        })
                        .collect(),
                };
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

#[cfg(test)]
mod tests;
