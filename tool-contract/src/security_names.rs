//! Which argument names are security context: a tenant, a caller, a privilege or a secret must
//! come from the trusted runtime context, never from what a model writes.
//!
//! Self-contained (no imports from the crate) because the derive crate's tests compile this
//! file too, to check that its compile-time copy of the list agrees with this one.

/// What a security-context name stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SecurityName {
    /// A tenant or organization.
    Tenant,
    /// The calling user.
    Principal,
    /// A role, scope or admin flag.
    Privilege,
    /// A token, key, password or secret.
    Secret,
}

/// Classifies a property name, ignoring case, `_` and `-`, so `tenantId` and `TENANT-ID`
/// match too.
pub(crate) fn security_name(name: &str) -> Option<SecurityName> {
    let n: String = name
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .collect::<String>()
        .to_lowercase();
    match n.as_str() {
        "tenant" | "tenantid" | "orgid" | "organizationid" => return Some(SecurityName::Tenant),
        "userid" | "principal" | "principalid" => return Some(SecurityName::Principal),
        "isadmin" | "role" | "roles" | "scope" | "scopes" => return Some(SecurityName::Privilege),
        _ => {}
    }
    ["token", "apikey", "password", "secret"]
        .iter()
        .any(|s| n.contains(s))
        .then_some(SecurityName::Secret)
}
