//! The capabilities a host links and binds, composed from one list: each
//! line names a capability's field and its [`Capability`] unit, and the
//! macro makes the rest (the shared [`Sources`], a call's [`Bound`] state,
//! binding by world, the linker wiring, and the projection of the store
//! data onto each capability). Adding a capability adds a line here.

use super::kind::World;
use super::public_web::PublicWebCapability;
use super::unit::{Caller, Capability, Project};
use super::uses::CallUses;
use super::workspace::WorkspaceCapability;
use crate::config::{ConfigError, HostConfig};
use wasmtime::component::Linker;

/// Store data holding every capability's state and the call's uses.
pub trait HasCapabilities: Send + 'static {
    /// The bound capabilities and the call's uses.
    fn capabilities(&mut self) -> (&mut Bound, &mut CallUses);
}

macro_rules! capability_set {
    ($($field:ident: $unit:ty),* $(,)?) => {
        /// Every capability's source, built once when the host starts.
        #[derive(Clone, Debug)]
        pub struct Sources {
            $(
                #[doc = concat!("The source of `", stringify!($field), "`.")]
                pub $field: <$unit as Capability>::Source,
            )*
        }

        /// Sources the embedder gives instead of the configured ones.
        #[derive(Default)]
        pub struct Overrides {
            $(
                #[doc = concat!("A source for `", stringify!($field), "`.")]
                pub $field: Option<<$unit as Capability>::Source>,
            )*
        }

        /// Every capability's state in one call; unbound ones refuse
        /// every use.
        #[derive(Default)]
        pub struct Bound {
            $(
                #[doc = concat!("The state of `", stringify!($field), "`.")]
                pub $field: <$unit as Capability>::Ctx,
            )*
        }

        impl Sources {
            /// Each capability's source: the embedder's, else the config's.
            pub fn build(config: &HostConfig, overrides: Overrides) -> Result<Self, ConfigError> {
                Ok(Self {
                    $(
                        $field: match overrides.$field {
                            Some(source) => source,
                            None => <$unit as Capability>::from_config(config)?,
                        },
                    )*
                })
            }

            /// The state of a call in `world`: its capability bound, the
            /// others not.
            pub fn bind(&self, world: World, caller: Caller<'_>) -> Bound {
                let granted = world.capability().map(|row| row.kind);
                let mut bound = Bound::default();
                $(
                    if granted == Some(<$unit as Capability>::KIND) {
                        bound.$field = <$unit as Capability>::bind(&self.$field, caller);
                    }
                )*
                bound
            }
        }

        /// Link every capability's import; the loader's policy decides
        /// which one a plugin may import.
        pub fn add_to_linker<T: HasCapabilities>(linker: &mut Linker<T>) -> wasmtime::Result<()> {
            $( <$unit as Capability>::add_to_linker::<T>(linker)?; )*
            Ok(())
        }

        $(
            impl<T: HasCapabilities> Project<$unit> for T {
                fn project(&mut self) -> (&mut <$unit as Capability>::Ctx, &mut CallUses) {
                    let (bound, uses) = self.capabilities();
                    (&mut bound.$field, uses)
                }
            }
        )*
    };
}

capability_set! {
    public_web: PublicWebCapability,
    workspace: WorkspaceCapability,
}
