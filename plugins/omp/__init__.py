"""OMP host plugin for commonkeep (TypeScript extension shipped as data, installer, ACP helpers)."""
