//! What a source file imports, read as the compiler reads it: every path in its `use` trees
//! (groups, renames, globs, `self`, `super::super::`), in its code and types, and in its macro
//! calls, resolved to an absolute path (`crate::render::gpu::Gpu`, `std::fs::read`) through the
//! file's own module path, its child modules and its `use` aliases.

use std::collections::HashMap;
use std::path::Path;

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// One path a file names, resolved, with the line it is on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Import {
    pub path: Vec<String>,
    pub line: usize,
}

impl Import {
    /// Whether this path is `prefix` or lies under it, segment by segment (`crate::render`
    /// covers `crate::render::gpu::Gpu`, not `crate::renderer`).
    pub fn is_under(&self, prefix: &str) -> bool {
        let prefix: Vec<&str> = prefix.split("::").collect();
        self.path.len() >= prefix.len() && self.path.iter().zip(&prefix).all(|(a, b)| a == b)
    }

    pub fn shown(&self) -> String {
        self.path.join("::")
    }
}

/// The module path of a library source file: `src/render/gpu.rs` → `crate::render::gpu`.
pub fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let mut path = vec!["crate".to_owned()];
    for part in relative.with_extension("").iter() {
        let part = part.to_string_lossy();
        if part != "mod" && part != "lib" {
            path.push(part.into_owned());
        }
    }
    path
}

/// Every path `text` (the file of module `module`) names, resolved.
pub fn imports(module: &[String], text: &str) -> Result<Vec<Import>, syn::Error> {
    let file = syn::parse_file(text)?;
    let top = Scope::new(module.to_vec(), &file.items);
    let mut reader = Reader { scopes: vec![top], found: Vec::new() };
    reader.visit_file(&file);
    Ok(reader.found)
}

/// A module being read: its path, the child modules it declares and the names its `use`
/// items bring in.
struct Scope {
    module: Vec<String>,
    children: Vec<String>,
    aliases: HashMap<String, Vec<String>>,
}

impl Scope {
    fn new(module: Vec<String>, items: &[syn::Item]) -> Scope {
        let children = items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Mod(m) => Some(m.ident.to_string()),
                _ => None,
            })
            .collect();
        let mut scope = Scope { module, children, aliases: HashMap::new() };
        for item in items {
            if let syn::Item::Use(u) = item {
                let mut leaves = Vec::new();
                use_leaves(&u.tree, Vec::new(), &mut leaves);
                for (name, path) in leaves {
                    let resolved = scope.resolve(&path);
                    if let Some(name) = name {
                        scope.aliases.insert(name, resolved);
                    }
                }
            }
        }
        scope
    }

    /// `path` as absolute: `crate`, `self` and `super` against this module, a child module's
    /// name against it, an alias through what it stands for; anything else is another crate.
    fn resolve(&self, path: &[String]) -> Vec<String> {
        let Some(first) = path.first() else { return Vec::new() };
        let mut base: Vec<String>;
        let mut rest = path;
        match first.as_str() {
            "crate" => return path.to_vec(),
            "self" => {
                base = self.module.clone();
                rest = &path[1..];
            }
            "super" => {
                base = self.module.clone();
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
            }
            name if self.children.iter().any(|c| c == name) => base = self.module.clone(),
            name => match self.aliases.get(name) {
                Some(target) => {
                    base = target.clone();
                    rest = &path[1..];
                }
                None => return path.to_vec(),
            },
        }
        base.extend(rest.iter().cloned());
        base
    }
}

/// The leaves of a `use` tree: the name each brings into scope (none for a glob or `_`) and
/// the path it names.
fn use_leaves(
    tree: &syn::UseTree,
    prefix: Vec<String>,
    out: &mut Vec<(Option<String>, Vec<String>)>,
) {
    let with = |ident: &syn::Ident| {
        let mut path = prefix.clone();
        path.push(ident.to_string());
        path
    };
    match tree {
        syn::UseTree::Path(p) => use_leaves(&p.tree, with(&p.ident), out),
        syn::UseTree::Name(n) if n.ident == "self" => {
            out.push((prefix.last().cloned(), prefix.clone()));
        }
        syn::UseTree::Name(n) => out.push((Some(n.ident.to_string()), with(&n.ident))),
        syn::UseTree::Rename(r) => {
            let path = if r.ident == "self" { prefix.clone() } else { with(&r.ident) };
            let name = Some(r.rename.to_string()).filter(|n| n != "_");
            out.push((name, path));
        }
        syn::UseTree::Glob(_) => out.push((None, prefix)),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_leaves(tree, prefix.clone(), out);
            }
        }
    }
}

struct Reader {
    scopes: Vec<Scope>,
    found: Vec<Import>,
}

impl Reader {
    fn scope(&self) -> &Scope {
        self.scopes.last().expect("a scope")
    }

    fn record(&mut self, path: Vec<String>, line: usize) {
        // A bare name (a local, a type in scope) names no module unless an alias says so.
        let resolved = self.scope().resolve(&path);
        if resolved.len() > 1 || path.len() > 1 {
            self.found.push(Import { path: resolved, line });
        }
    }

    /// Paths inside a macro's tokens (`format!`, `assert!`, `matches!`): runs of `a::b::c`.
    fn record_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let colon =
            |at: usize| matches!(tokens.get(at), Some(TokenTree::Punct(p)) if p.as_char() == ':');
        let mut at = 0;
        while at < tokens.len() {
            match &tokens[at] {
                TokenTree::Group(group) => self.record_tokens(group.stream()),
                TokenTree::Ident(first) => {
                    let line = first.span().start().line;
                    let mut run = vec![first.to_string()];
                    while colon(at + 1) && colon(at + 2) {
                        let Some(TokenTree::Ident(next)) = tokens.get(at + 3) else { break };
                        run.push(next.to_string());
                        at += 3;
                    }
                    if run.len() > 1 {
                        self.record(run, line);
                    }
                }
                _ => {}
            }
            at += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        let Some((_, items)) = &item.content else { return };
        let mut module = self.scope().module.clone();
        module.push(item.ident.to_string());
        let mut scope = Scope::new(module, items);
        // An inline module (`mod tests`) sees through `use super::*` what its parent named.
        for (name, target) in &self.scope().aliases {
            scope.aliases.entry(name.clone()).or_insert_with(|| target.clone());
        }
        self.scopes.push(scope);
        syn::visit::visit_item_mod(self, item);
        self.scopes.pop();
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&item.tree, Vec::new(), &mut leaves);
        let line = item.use_token.span.start().line;
        for (_, path) in leaves {
            let resolved = self.scope().resolve(&path);
            self.found.push(Import { path: resolved, line });
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = path.segments.first().map_or(0, |s| s.ident.span().start().line);
        self.record(segments, line);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.record_tokens(mac.tokens.clone());
        syn::visit::visit_macro(self, mac);
    }
}
