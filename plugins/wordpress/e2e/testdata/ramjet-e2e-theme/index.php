<?php
/**
 * The only template: lists posts, or shows one with its terms, author,
 * neighbours and approved comments. Markers (RJ-...) are what the test
 * looks for.
 *
 * @package RamjetE2E
 */

?><!doctype html>
<html><head><meta charset="utf-8"><title><?php echo esc_html( wp_get_document_title() ); ?></title><?php wp_head(); ?></head>
<body <?php body_class(); ?>>
<?php wp_body_open(); ?>
<p>RJ-PAGE</p>
<?php
if ( is_user_logged_in() ) {
	echo '<p>RJ-LOGGED-IN-AS ' . esc_html( wp_get_current_user()->user_login ) . '</p>';
}
if ( is_singular() ) {
	while ( have_posts() ) {
		the_post();
		echo '<h1 class="rj-title">' . esc_html( get_the_title() ) . '</h1>';
		echo '<div class="rj-cats">' . get_the_category_list( ', ' ) . '</div>';
		echo '<div class="rj-author">' . esc_html( get_the_author() ) . '</div>';
		the_content();
		previous_post_link( '<div class="rj-prev">%link</div>' );
		next_post_link( '<div class="rj-next">%link</div>' );
		$comments = get_comments(
			array(
				'post_id' => get_the_ID(),
				'status'  => 'approve',
			)
		);
		echo '<ol class="rj-comments">';
		wp_list_comments( array(), $comments );
		echo '</ol>';
	}
} else {
	echo '<ul class="rj-list">';
	while ( have_posts() ) {
		the_post();
		echo '<li><a href="' . esc_url( get_permalink() ) . '">' . esc_html( get_the_title() ) . '</a></li>';
	}
	echo '</ul>';
}
wp_footer();
?>
</body></html>
