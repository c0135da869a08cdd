"""Pictures of compiled programs and their profiles (docs/pictures.md): the graph of vertices
and edges (`graph`, `layout`, `render`) and the profile views (`report`)."""
